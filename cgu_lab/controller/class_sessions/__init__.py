"""Class sessions: a course's booked window (service.py: booking, the admission's hook,
the pre-warm loop), its API (router.py) and the pages' views of it (pages.py)."""
