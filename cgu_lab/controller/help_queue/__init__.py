"""Raise hand: a course's help queue (service.py), its API (router.py, lab_router.py for
JupyterLab's panel and button) and the course page's view of it (pages.py)."""
