"""The admin's GPUs page: GPU types, the devices of the pool and, on Kubernetes, the
cluster's GPU products, through the GPUs API."""

from __future__ import annotations

from fastapi import APIRouter

from ..page_kit import shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(router, ("/admin/gpus", "gpus", "GPUs", "admin"))
