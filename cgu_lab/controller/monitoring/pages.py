"""The admin's monitoring pages: load per node, system and user, and the audit log."""

from __future__ import annotations

from fastapi import APIRouter

from ..page_kit import shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(
    router,
    ("/admin/audit", "audit", "Audit log", "admin"),
    ("/admin/monitoring", "monitoring", "Monitoring", "admin"),
)
