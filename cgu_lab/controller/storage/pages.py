"""The storage page: my own storage and my courses' shared storage, browsed, uploaded to
and downloaded through the storage API."""

from __future__ import annotations

from fastapi import APIRouter

from ..page_kit import shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(router, ("/storage", "storage", "Storage", ""))
