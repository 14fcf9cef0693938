"""Bad input gets a 4xx with {message, code}, never a 500 or a silent coercion.

Each case of the security review (issue 9, item 8) is replayed against the controller
app in the test's process (tests/inprocess.py: every request goes through the whole
ASGI app, its middleware, FastAPI's validation and the error handlers, as behind
uvicorn; no notebook server is needed): numbers beyond any column (1e308, ids of 2^63), enums in
the query string, bodies that are not JSON or not UTF-8, JSON types that must
not pass for one another, and display names that are markup or a novel. The
framework's own refusals (unknown route, wrong method) answer in the same shape.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


ID_TOO_BIG = 2**63
JSON_HEADERS = {"Content-Type": "application/json"}


def refused(response, status: int | tuple[int, ...] = 400, *words: str) -> dict:
    """Assert a refusal in the API's one error shape; return its body."""
    statuses = status if isinstance(status, tuple) else (status,)
    assert response.status_code in statuses, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert isinstance(body.get("message"), str) and body["message"], body
    assert isinstance(body.get("code"), str) and body["code"], body
    assert "Traceback" not in response.text
    for word in words:
        assert word in body["message"], (word, body)
    return body


@pytest.mark.parametrize(
    "limits",
    [
        {"cpu": 1e308},
        {"cpu": -1},
        {"cpu": "1e3"},
        {"cpu": "inf"},
        {"cpu": "NaN"},
        {"memory": 1e308},
        {"memory": "9" * 400},
        {"memory": 2**62},
        {"memory": -5},
        {"notebooks": 10**30},
        {"notebooks": -1},
        {"gpus": {"premium": 2**63}},
        {"gpus": {"Not A Type": 1}},
    ],
)
def test_amounts_beyond_any_machine_are_refused(admin, limits):
    refused(admin.put("/api/quotas/default", json=limits), 400)


def test_numbers_json_cannot_hold_are_refused(admin):
    # Python's JSON reader turns 1e400 into infinity and reads NaN; neither is an amount.
    for raw in ('{"cpu": 1e400}', '{"cpu": NaN}', '{"cpu": Infinity}', '{"memory": -1e400}'):
        response = admin.put("/api/quotas/default", content=raw, headers=JSON_HEADERS)
        refused(response, 400)
    # An integer with more digits than Python will read.
    huge = '{"notebooks": ' + "9" * 5000 + "}"
    refused(admin.put("/api/quotas/default", content=huge, headers=JSON_HEADERS), 400)


def test_the_cpu_of_1e308_says_the_ceiling(admin):
    refused(admin.put("/api/quotas/default", json={"cpu": 1e308}), 400, "cpu", "at most")
    for cpu in (0, "0", "0m"):
        refused(admin.put("/api/quotas/default", json={"cpu": cpu}), 400, "more than 0")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/api/me/tokens/{id}"),
        ("GET", "/api/deployments/{id}"),
        ("GET", "/api/deployments/{id}/events"),
        ("GET", "/api/submissions/{id}"),
        ("POST", "/api/submissions/{id}/open"),
        ("GET", "/api/assignments/{id}/submissions"),
        ("DELETE", "/api/notebooks/root-admin/lab/shares/{id}"),
    ],
)
@pytest.mark.parametrize("value", [ID_TOO_BIG, 10**30, 0, -1])
def test_ids_out_of_range_are_refused_not_a_500(admin, method, path, value):
    response = admin.request(method, path.format(id=value))
    refused(response, (400, 404))


def test_ids_in_range_that_do_not_exist_are_404(admin):
    refused(admin.get(f"/api/deployments/{2**63 - 1}"), 404)
    refused(admin.delete(f"/api/me/tokens/{2**63 - 1}"), 404)


def test_an_id_in_a_query_is_bounded_too(admin):
    refused(admin.get("/api/audit", params={"before": ID_TOO_BIG}), 400, "before")
    assert admin.get("/api/audit", params={"before": 2**63 - 1}).status_code == 200


@pytest.mark.parametrize("role", ["null", "emperor", "ADMIN", "", "admin\x00"])
def test_enums_in_the_query_are_validated(admin, role):
    refused(admin.get("/api/users", params={"role": role}), 400, "role")


def test_query_enums_are_listed_in_the_message(admin):
    body = refused(admin.get("/api/users", params={"role": "null"}), 400)
    assert "'student'" in body["message"]
    refused(admin.get("/api/notebooks", params={"state": "null"}), 400, "state")


def test_valid_enums_in_the_query_still_work(admin):
    for role in ("admin", "teacher", "ta", "student"):
        assert admin.get("/api/users", params={"role": role}).status_code == 200


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name": "caf\xe9"}',  # Latin-1, not UTF-8
        b'{"name": "\xff\xfe"}',
        b"\xef\xbb\xbf\xff",
        b"\x80",
    ],
)
def test_a_body_that_is_not_utf8_gets_message_and_code(admin, raw):
    refused(admin.post("/api/users", content=raw, headers=JSON_HEADERS), 400)


@pytest.mark.parametrize("raw", ['{"name":', "{name: 'x'}", "[", "", "null", "42", '"x"'])
def test_malformed_or_wrong_json_gets_message_and_code(admin, raw):
    refused(admin.post("/api/users", content=raw, headers=JSON_HEADERS), 400)


def test_malformed_json_says_where(admin):
    body = refused(admin.post("/api/users", content='{"name":', headers=JSON_HEADERS), 400)
    assert "not valid JSON" in body["message"] and "character 8" in body["message"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/quotas/default", {"gpus": False}),
        ("/api/quotas/default", {"notebooks": False}),
        ("/api/quotas/default", {"notebooks": True}),
        ("/api/quotas/default", {"notebooks": "2"}),
        ("/api/quotas/default", {"notebooks": 2.5}),
        ("/api/quotas/default", {"gpus": {"premium": True}}),
        ("/api/quotas/default", {"cpu": True}),
        ("/api/users/alice", {"active": 0}),
        ("/api/users/alice", {"active": 1}),
        ("/api/users/alice", {"active": "false"}),
        ("/api/users/alice", {"active": None, "role": 3}),
        ("/api/culling/policy", {"enabled": 1}),
        ("/api/culling/policy", {"idle_minutes": True}),
        ("/api/gpu-types/premium", {"share": True}),
        ("/api/gpu-types/premium", {"share": "2"}),
    ],
)
def test_json_types_do_not_pass_for_one_another(admin, path, body):
    method = admin.patch if path.startswith("/api/users/") else admin.put
    refused(method(path, json=body), 400)


def test_a_refused_bool_changes_nothing(admin):
    before = admin.ok("GET", "/api/users/alice")
    refused(admin.patch("/api/users/alice", json={"active": 0}), 400)
    assert admin.ok("GET", "/api/users/alice")["active"] == before["active"]


def test_whole_numbers_written_as_json_floats_are_integers(admin):
    """JSON (and its Schema) count 2.0 as an integer; only true/"2"/2.5 are refused."""
    raw = '{"notebooks": 2.0, "gpus": {"premium": 1.0}}'
    response = admin.put("/api/quotas/default", content=raw, headers=JSON_HEADERS)
    assert response.status_code == 200, response.text
    assert response.json()["limits"]["notebooks"] == 2
    admin.ok("PUT", "/api/quotas/default", json={})


@pytest.mark.parametrize(
    "display_name",
    [
        "x" * 10_000,
        "<script>alert(1)</script>",
        "<b>bold</b>",
        "a > b",
        "two\nlines",
        "nul\x00",
        "x" * 101,
    ],
)
def test_display_names_are_short_plain_text(admin, display_name):
    refused(admin.patch("/api/users/alice", json={"display_name": display_name}), 400)
    refused(admin.post("/api/groups", json={"name": "dn", "display_name": display_name}), 400)
    body = {"name": "dn", "display_name": display_name}
    refused(admin.post("/api/users", json=body), 400, "display_name")


def test_display_name_of_100_plain_characters_is_fine(admin):
    name = "Ada Lovelace — Analytical Engine, 1843 (notes) " + "é" * 53
    assert len(name) == 100
    assert (
        admin.ok("PATCH", "/api/users/alice", json={"display_name": name})["display_name"] == name
    )
    admin.ok("PATCH", "/api/users/alice", json={"display_name": "alice"})


def test_the_markup_message_is_one_a_student_can_act_on(admin):
    body = refused(admin.patch("/api/users/alice", json={"display_name": "<b>x</b>"}), 400)
    assert "'<'" in body["message"] and "display_name" in body["message"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PATCH", "/api/users/alice", {"email": "x" * 300 + "@example.edu"}),
        ("PATCH", "/api/users/alice", {"email": "not an address"}),
        ("PATCH", "/api/users/alice", {"email": "<a@b>"}),
        ("POST", "/api/users", {"name": "x" * 65}),
        ("POST", "/api/users", {"name": "u1", "password": "p" * 2000}),
        ("POST", "/api/groups", {"name": "g" * 64}),
        ("POST", "/api/groups", {"name": "g1", "description": "d" * 10_001}),
        ("POST", "/api/groups", {"name": "g1", "description": "nul\x00"}),
        ("PUT", "/api/environments/env1", {"description": "d" * 10_001, "image": "x"}),
        ("PUT", "/api/environments/env1", {"image": "has spaces"}),
        ("PUT", "/api/gpu-types/t1", {"models": ["m"] * 21}),
        ("PUT", "/api/gpu-types/t1", {"node_selector": {"": "x"}}),
        ("POST", "/api/gpus", {"device_id": "d" * 101}),
        ("POST", "/api/gpus", {"device_id": "GPU 1"}),
        ("POST", "/api/me/tokens", {"name": "t" * 101}),
        ("POST", "/api/users/import", {"csv": "x" * 1_000_001}),
        ("POST", "/api/notebooks", {"name": "n1", "display_name": "<i>"}),
        ("POST", "/api/notebooks", {"name": "n" * 64}),
        ("POST", "/api/notebooks/root-admin/x/shares", {"grantee": "bob", "note": "n" * 201}),
        ("POST", "/api/notebooks/root-admin/x/shares", {"grantee": "b" * 65}),
        ("POST", "/api/notebooks/root-admin/x/shares", {"grantee": "bob", "path": "p" * 1025}),
        ("POST", "/api/groups/g1/assignments", {"name": "a1", "title": "t" * 201}),
        ("POST", "/api/groups/g1/assignments", {"name": "a1", "deadline": 0}),
        ("POST", "/api/assignments/1/submissions", {"notebook": "n", "paths": ["p"] * 5001}),
    ],
)
def test_lengths_are_capped(admin, method, path, body):
    refused(admin.request(method, path, json=body), 400)


def test_quota_amounts_in_the_range_still_work(admin):
    limits = {"cpu": "500m", "memory": "2Gi", "gpus": {"premium": 1}, "notebooks": 2}
    quota = admin.ok("PUT", "/api/quotas/default", json=limits)["limits"]
    assert quota.pop("disk") is None  # not given: no disk allowance
    assert quota == {"cpu_milli": 500, "memory": 2**31, "gpus": {"premium": 1}, "notebooks": 2}
    admin.ok("PUT", "/api/quotas/default", json={"cpu": 0.5, "memory": 2**31})
    admin.ok("PUT", "/api/quotas/default", json={})


def test_a_share_cannot_outlast_a_year_or_overflow(admin):
    for minutes in (1e308, 10**12, 366 * 24 * 60 + 1):
        body = {"grantee": "bob", "expires_in_minutes": minutes}
        refused(admin.post("/api/notebooks/root-admin/x/shares", json=body), 400, "at most")


def test_unknown_api_route_is_404_with_message_and_code(admin):
    body = refused(admin.get("/api/no-such-route"), 404)
    assert body["code"] == "not_found" and "/api/no-such-route" in body["message"]


def test_wrong_method_is_405_listing_every_allowed_method(admin):
    response = admin.post("/api/health")
    body = refused(response, 405)
    assert body["code"] == "method_not_allowed"
    # /api/quotas/default has GET and PUT: both are named, though they are two routes.
    response = admin.post("/api/quotas/default", json={})
    refused(response, 405)
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert {"GET", "PUT"} <= allowed and "POST" not in allowed


def test_errors_without_login_keep_the_shape(site):
    with site.anonymous() as anonymous:
        refused(anonymous.get("/api/users"), 401)
        refused(anonymous.get(f"/api/deployments/{ID_TOO_BIG}"), (400, 401))
        refused(anonymous.get("/api/nothing-here"), 404)


def test_the_openapi_document_states_the_rules(admin):
    spec = admin.ok("GET", "/api/openapi.json")
    schemas = spec["components"]["schemas"]
    display_name = schemas["UserPatch"]["properties"]["display_name"]["anyOf"][0]
    assert display_name["maxLength"] == 100 and "<>" in display_name["pattern"]
    parameters = spec["paths"]["/api/users"]["get"]["parameters"]
    role = next(p for p in parameters if p["name"] == "role")["schema"]["anyOf"][0]
    assert role["enum"] == ["admin", "teacher", "ta", "student"]
    token_id = spec["paths"]["/api/me/tokens/{token_id}"]["delete"]["parameters"][0]["schema"]
    assert token_id["minimum"] == 1 and token_id["maximum"] == 2**63 - 1
    assert "HTTPValidationError" not in schemas
    assert json.dumps(spec).count('"422"') == 0
