"""Class sessions: a course's booked window (service.py: booking, the admission's hook,
the pre-warm loop) and its API (router.py); the course and monitoring pages show them
with static/js/class_sessions.js."""
