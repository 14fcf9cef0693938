"""The written API (docs/openapi.json) is the one the code serves."""

import json
from pathlib import Path

from openapi_spec_validator import validate

from cgu_lab.controller.app import create_app

SPEC = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"


def test_committed_openapi_matches_the_code():
    generated = create_app().api.openapi()
    validate(generated)
    committed = json.loads(SPEC.read_text())
    assert committed == json.loads(json.dumps(generated)), (
        "run `make openapi` and commit docs/openapi.json"
    )


def test_every_route_documents_its_errors():
    spec = create_app().api.openapi()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            if path == "/api/health":
                continue
            assert "403" in operation["responses"], (
                f"{method.upper()} {path} lacks its error responses"
            )
