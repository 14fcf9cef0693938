"""Sharing: grants of a notebook or one file to a person or a group, read-only or
editable, optionally expiring; and what a notebook's server may ask about access."""
