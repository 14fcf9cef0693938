"""The admin's System page: which backend runs, the environments (built here, or declared
with an image) and the apps each offers, the school log-in's rules, and a link to the
API's document. Here because environments are most of it; the school log-in's part is
a template of school_login's own, included."""

from __future__ import annotations

from fastapi import APIRouter

from ..page_kit import shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(router, ("/admin/system", "system", "System", "admin"))
