"""The admin's quotas page: the default quota and the groups' budgets, set through the
quotas API."""

from __future__ import annotations

from fastapi import APIRouter

from ..page_kit import shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(router, ("/admin/quotas", "quotas", "Quotas", "admin"))
