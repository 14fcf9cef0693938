"""The default environment cannot be deleted (issue 23, item 10f): new notebooks that
name no environment get it, so an administrator makes another the default first."""

from __future__ import annotations

import sys


def default_of(admin) -> str:
    return next(e["name"] for e in admin.ok("GET", "/api/environments") if e["is_default"])


def test_the_default_environment_is_refused_with_what_to_do(admin):
    name = default_of(admin)
    response = admin.delete(f"/api/environments/{name}")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "conflict"
    assert "make another environment the default first" in body["message"]
    assert default_of(admin) == name


def test_once_another_is_the_default_the_former_one_may_go(admin):
    former = default_of(admin)
    admin.ok(
        "PUT", "/api/environments/spare", json={"local_prefix": sys.prefix, "is_default": True}
    )
    assert default_of(admin) == "spare"
    assert admin.delete("/api/environments/spare").status_code == 409
    admin.ok("DELETE", f"/api/environments/{former}")
    assert former not in {e["name"] for e in admin.ok("GET", "/api/environments")}
