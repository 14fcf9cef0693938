"""Environments (the packages a notebook runs with) and GPU types: the catalog, the
apps each environment offers, builds of environments on this machine."""
