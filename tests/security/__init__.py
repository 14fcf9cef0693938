"""Security properties, each proved against real processes and real files."""
