"""Raise hand: a course's help queue (service.py), its API (router.py, lab_router.py for
JupyterLab's panel and button); the course page (teaching/pages.py) shows it with
static/js/course_help.js."""
