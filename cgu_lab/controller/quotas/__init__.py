"""Quotas: users' and groups' limits, and their mirror into the cluster."""
