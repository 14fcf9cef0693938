"""Monitoring: load per node, system and user, and the audit log's router."""
