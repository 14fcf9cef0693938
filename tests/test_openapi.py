"""The written API (docs/openapi.json) is the one the code serves, and it states its rules.

Every value a client sends has a documented bound (a maximum, a maxLength, a
pattern or an enum), every refusal is documented as the one ErrorBody shape,
and nothing promises FastAPI's 422 body, which this API never sends.
Schemathesis (tests/security/test_schemathesis.py) then holds the running
server to this document.
"""

import json
from functools import cache
from pathlib import Path

from openapi_spec_validator import validate

from cgu_lab.controller.app import create_app

SPEC = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"
ERROR_STATUSES = {"400", "401", "403", "404", "409", "429", "501", "503"}


@cache
def spec() -> dict:
    return create_app().api.openapi()


def operations():
    for path, methods in spec()["paths"].items():
        for method, operation in methods.items():
            yield path, method.upper(), operation


def resolve(schema: dict) -> dict:
    while "$ref" in schema:
        schema = spec()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def bounded_text(schema: dict) -> bool:
    """A maxLength, a date, or a pattern that repeats nothing without end ('^(a|b)$')."""
    if "maxLength" in schema or schema.get("format") == "date-time":
        return True
    pattern = schema.get("pattern", "")
    return bool(pattern) and not any(mark in pattern for mark in ("*", "+", ",}"))


def unbounded(schema: dict, where: str, seen: frozenset = frozenset()) -> list[str]:
    """The places below `schema` where a client could send something of any size."""
    ref = schema.get("$ref")
    if ref in seen:
        return []
    seen = seen | {ref} if ref else seen
    schema = resolve(schema)
    problems = []
    for key in ("anyOf", "oneOf", "allOf"):
        for index, part in enumerate(schema.get(key, [])):
            problems += unbounded(part, f"{where}<{index}>", seen)
    kind = schema.get("type")
    if "enum" in schema or "const" in schema or kind in ("boolean", "null"):
        return problems
    if kind == "string" and not bounded_text(schema):
        problems.append(f"{where}: a string without maxLength")
    low = "minimum" in schema or "exclusiveMinimum" in schema
    if kind in ("integer", "number") and not (low and "maximum" in schema):
        problems.append(f"{where}: a number without minimum and maximum")
    if kind == "array":
        if "maxItems" not in schema:
            problems.append(f"{where}: an array without maxItems")
        problems += unbounded(schema.get("items", {}), f"{where}[]", seen)
    if kind == "object":
        for name, part in schema.get("properties", {}).items():
            problems += unbounded(part, f"{where}.{name}", seen)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            if "maxProperties" not in schema:
                problems.append(f"{where}: a mapping without maxProperties")
            if "propertyNames" not in schema:
                problems.append(f"{where}: a mapping whose keys are not described")
            problems += unbounded(extra, f"{where}.*", seen)
        elif "properties" in schema and extra is not False:
            problems.append(f"{where}: unknown fields are not refused")
    if not kind and not any(k in schema for k in ("anyOf", "oneOf", "allOf", "enum")):
        problems.append(f"{where}: no type")
    return problems


def test_committed_openapi_matches_the_code():
    generated = spec()
    validate(generated)
    committed = json.loads(SPEC.read_text())
    assert committed == json.loads(json.dumps(generated)), (
        "run `make openapi` and commit docs/openapi.json"
    )


def test_every_route_documents_its_errors():
    for path, method, operation in operations():
        if path == "/api/health":
            continue
        assert set(operation["responses"]) >= ERROR_STATUSES, (
            f"{method} {path} lacks its error responses"
        )


def test_every_error_is_documented_as_error_body_in_json():
    for path, method, operation in operations():
        for status, response in operation["responses"].items():
            if status[0] in "45":
                assert response["content"] == {
                    "application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
                }, f"{method} {path} {status}"
    body = spec()["components"]["schemas"]["ErrorBody"]
    assert set(body["required"]) == {"message", "code"}


def test_no_route_promises_fastapis_422():
    """Bad input answers 400 with ErrorBody; a 422 with FastAPI's body never comes."""
    for path, method, operation in operations():
        assert "422" not in operation["responses"], f"{method} {path}"
    assert "HTTPValidationError" not in spec()["components"]["schemas"]


def test_every_parameter_is_bounded():
    problems = []
    for path, method, operation in operations():
        for parameter in operation.get("parameters", []):
            where = f"{method} {path} {parameter['in']} {parameter['name']}"
            problems += unbounded(parameter["schema"], where)
            schema = parameter["schema"]
            segment = parameter["in"] == "path" and schema.get("type") == "string"
            if segment and "pattern" not in schema:
                problems.append(f"{where}: a path segment without a pattern")
    assert not problems, "\n".join(problems)


def test_every_request_body_is_bounded_and_closed():
    problems = []
    for path, method, operation in operations():
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body:
            problems += unbounded(body["schema"], f"{method} {path} body")
    assert not problems, "\n".join(problems)


def test_ids_span_the_databases_integers():
    seen = 0
    for path, method, operation in operations():
        for parameter in operation.get("parameters", []):
            schema = parameter["schema"]
            if parameter["name"].endswith("_id") and schema.get("type") == "integer":
                assert (schema["minimum"], schema["maximum"]) == (1, 2**63 - 1), (method, path)
                seen += 1
    assert seen >= 8
