"""Bounded field types shared by the API's request bodies, path and query parameters.

Why a module of its own: every number, id, name and text the API accepts has a
range, a length or a pattern, defined once here. Bad input is then refused
with a 400 that names the field and the rule (never a 500 from an overflow or
from the database), and FastAPI writes the same rules into the OpenAPI
document, which Schemathesis holds the server to.

Bodies are strict (see `schemas.Strict`): a JSON `false` is not the number 0
and `0` is not `false`. Where a rule has a sentence a student can act on in
`core` ("CPU must be more than 0"), the validator reuses it, so the API and
the pages answer alike; the JSON Schema keywords say the same thing to
machines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from ...core import names
from ...core.errors import Invalid
from ...core.resources import (
    CPU_PATTERN,
    MAX_AMOUNT_TEXT,
    MAX_CPU_CORES,
    MAX_GPUS,
    MAX_MEMORY,
    MAX_NOTEBOOKS,
    MEMORY_PATTERN,
    parse_cpu,
    parse_memory,
)
from ..accounts.security import MIN_PASSWORD, check_password_strength

# Row ids: SQLite's INTEGER and PostgreSQL's bigint hold at most 2^63 - 1.
MAX_ID = 2**63 - 1
MAX_PATH = 1024  # a file or folder path inside a home
MAX_PATHS = 1000  # files and folders in one request
MAX_QUERY = 100  # a search text
MAX_TEXT = 10_000  # a description
MAX_NOTE = 2000
MAX_CSV = 1_000_000  # a class list
MAX_PASSWORD = 1024  # hashing a longer one would only burn CPU
MAX_MINUTES = 366 * 24 * 60  # a year, as for shares

# One line of text: no control characters. Multi-line text: no NUL, which
# PostgreSQL cannot store.
LINE_PATTERN = r"^[^\x00-\x1f\x7f]*$"
TEXT_PATTERN = r"^[^\x00]*$"
# Container images and device ids: printable ASCII without spaces.
TOKEN_PATTERN = r"^[!-~]*$"  # noqa: S105 (a pattern, not a secret)
RoleName = Literal["admin", "teacher", "ta", "student"]
StateName = Literal["stopped", "queued", "starting", "running", "stopping"]


class Strict(BaseModel):
    """A request body: no unknown fields, no type coercion (a JSON bool is not a number).

    Dates stay lenient (`Field(strict=False)`): JSON has no date type, they arrive as text.
    """

    model_config = ConfigDict(extra="forbid", strict=True)


def refuse(message: str) -> PydanticCustomError:
    # The message travels as context so that braces in it are never read as a template.
    return PydanticCustomError("invalid", "{reason}", {"reason": message})


def domain_rule(check: Callable[[Any], object]) -> AfterValidator:
    """Run a core rule; its Invalid becomes a validation error with the same sentence."""

    def validate(value: Any) -> Any:
        try:
            check(value)
        except Invalid as error:
            raise refuse(error.message) from None
        return value

    return AfterValidator(validate)


def matching(pattern: str, message: str) -> AfterValidator:
    compiled = re.compile(pattern)

    def validate(value: str) -> str:
        if not compiled.fullmatch(value):
            raise refuse(message)
        return value

    return AfterValidator(validate)


def _whole(value: Any) -> Any:
    # JSON Schema counts 2.0 as an integer; a bool is never one (and stays refused).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# Applied before a strict int: accepts 2.0 as 2, still refuses true, "2" and 2.5.
WHOLE = BeforeValidator(_whole)


def text(max_length: int, pattern: str = LINE_PATTERN, min_length: int = 0) -> Any:
    """A string of at most `max_length` characters matching `pattern`."""
    what = "control characters" if pattern == LINE_PATTERN else "NUL characters"
    return Annotated[
        str,
        Field(min_length=min_length, max_length=max_length, json_schema_extra={"pattern": pattern}),
        matching(pattern, f"cannot contain {what}"),
    ]


def number(
    kind: type,
    *,
    minimum: float | None = None,
    maximum: float,
    exclusive: bool = False,
    too_small: str = "",
    too_large: str = "",
) -> Any:
    """A finite int or float in [minimum, maximum] (or (minimum, maximum] if `exclusive`)."""
    low = "exclusiveMinimum" if exclusive else "minimum"
    schema = {"maximum": maximum} | ({low: minimum} if minimum is not None else {})

    def validate(value: float) -> float:
        if isinstance(value, float) and math.isnan(value):
            raise refuse("must be a number")
        if minimum is not None and (value <= minimum if exclusive else value < minimum):
            above = "more than" if exclusive else "at least"
            raise refuse(too_small or f"must be {above} {minimum:g}")
        if value > maximum:
            raise refuse(too_large or f"must be at most {maximum:g}")
        return value

    checks = (Field(json_schema_extra=schema), AfterValidator(validate))
    if kind is int:
        checks = (WHOLE, *checks)
    return Annotated[(kind, *checks)]


# -- names -------------------------------------------------------------------------

UserName = Annotated[
    str,
    Field(
        max_length=names.MAX_USER_NAME,
        json_schema_extra={"pattern": names.USER_NAME_PATTERN},
        description="Login name: lower-case letters, digits, '.', '_' or '-' (no '..')",
    ),
    domain_rule(names.check_user_name),
]


def label(what: str) -> Any:
    """A group, notebook, template, environment, GPU-type, job or assignment name."""
    return Annotated[
        str,
        Field(max_length=names.MAX_LABEL, json_schema_extra={"pattern": names.LABEL_PATTERN}),
        domain_rule(lambda value: names.check_label(value, what)),
    ]


GroupName = label("group")
NotebookName = label("notebook")
TemplateName = label("template")
GpuTypeName = label("GPU type")
EnvironmentName = label("environment")
JobName = label("training job")
AssignmentName = label("assignment")
# A notebook made from a template may leave its name empty: the template's is used.
NotebookNameOrEmpty = Annotated[
    str,
    Field(
        max_length=names.MAX_LABEL,
        json_schema_extra={"pattern": names.LABEL_PATTERN.replace("^", "^$|^", 1)},
    ),
    domain_rule(lambda value: value == "" or names.check_label(value, "notebook")),
]
GrantTarget = Annotated[
    str,
    Field(
        max_length=names.MAX_USER_NAME,
        json_schema_extra={"pattern": names.USER_NAME_PATTERN},
        description="A user name or a group name",
    ),
    matching(names.USER_NAME_PATTERN, "is not a user or group name"),
]
DisplayName = Annotated[
    str,
    Field(
        max_length=names.MAX_DISPLAY_NAME,
        json_schema_extra={"pattern": names.DISPLAY_NAME_PATTERN},
        description="Plain text on one line: no '<', '>' or control characters",
    ),
    domain_rule(names.check_display_name),
]
Email = Annotated[
    str,
    Field(max_length=names.MAX_EMAIL, json_schema_extra={"pattern": names.EMAIL_PATTERN}),
    domain_rule(names.check_email),
]
Password = Annotated[str, Field(max_length=MAX_PASSWORD)]
# A password being set: the strength rule of the login code, stated in the schema too.
NewPassword = Annotated[
    str,
    Field(json_schema_extra={"minLength": MIN_PASSWORD, "maxLength": MAX_PASSWORD}),
    domain_rule(check_password_strength),
]
Line = text(200)
Title = text(200)
Description = text(MAX_TEXT, TEXT_PATTERN)
Note = text(MAX_NOTE, TEXT_PATTERN)
RelativePath = text(MAX_PATH, TEXT_PATTERN)
Paths = Annotated[list[RelativePath], Field(max_length=MAX_PATHS)]
Globs = Annotated[list[text(255)], Field(max_length=100)]
Image = text(500, TOKEN_PATTERN)
# A Kubernetes object's name (a DNS subdomain): a Kubeflow PodDefault's, on the notebook form.
OBJECT_NAME_PATTERN = r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$"
PodDefaultName = Annotated[
    str,
    Field(min_length=1, max_length=253, json_schema_extra={"pattern": OBJECT_NAME_PATTERN}),
    matching(OBJECT_NAME_PATTERN, "is not a configuration's name (a Kubernetes object name)"),
]
# An image's CPU architecture as Kubernetes names it; any: multi-architecture or not said.
Arch = Literal["any", "amd64", "arm64"]
DeviceId = text(100, TOKEN_PATTERN, min_length=1)

# -- amounts -----------------------------------------------------------------------


def _cpu(value: float | str) -> None:
    parse_cpu(value)  # zero, too much: the sentence of the rule
    if isinstance(value, str) and not re.fullmatch(CPU_PATTERN, value):
        raise Invalid(f"'{value[:MAX_AMOUNT_TEXT]}' is not a CPU amount: write 2, 0.5 or 500m")


# CPU: cores as a number, or text such as "0.5" or "500m".
Cpu = Annotated[
    float | str,
    domain_rule(_cpu),
    Field(
        json_schema_extra={
            "anyOf": [
                {"type": "number", "minimum": 0.001, "maximum": MAX_CPU_CORES},
                {"type": "string", "pattern": CPU_PATTERN, "maxLength": MAX_AMOUNT_TEXT},
            ]
        },
        description="Cores, e.g. 4 or 0.5 or 500m (at least 1m, at most a million cores)",
    ),
]


def _memory(value: int | str) -> None:
    parse_memory(value)
    if isinstance(value, str) and not re.fullmatch(MEMORY_PATTERN, value):
        shown = value[:MAX_AMOUNT_TEXT]
        raise Invalid(f"'{shown}' is not a memory amount: write it like 2G, 512Mi or 1.5GiB")


def _memory_type(minimum: int, description: str, check: Callable[[Any], object]) -> Any:
    return Annotated[
        int | str,
        WHOLE,
        domain_rule(check),
        Field(
            json_schema_extra={
                "anyOf": [
                    {"type": "integer", "minimum": minimum, "maximum": MAX_MEMORY},
                    {"type": "string", "pattern": MEMORY_PATTERN, "maxLength": MAX_AMOUNT_TEXT},
                ]
            },
            description=description,
        ),
    ]


# Memory: bytes as a whole number, or text such as "8Gi", "512M" or "1.5 GiB".
Memory = _memory_type(1, "e.g. 8Gi, 512M or a number of bytes (at most 1 PiB)", _memory)
# A GPU's memory: 0 when unknown.
DeviceMemory = _memory_type(
    0, "e.g. 24Gi; 0 when unknown", lambda value: value == 0 or _memory(value)
)
GpuCount = number(int, minimum=0, maximum=8)
GpuLimit = number(int, minimum=0, maximum=MAX_GPUS)
NotebookLimit = number(int, minimum=0, maximum=MAX_NOTEBOOKS)


def mapping(key: Any, value: Any, key_schema: dict, value_schema: dict, max_items: int) -> Any:
    """A JSON object whose every key matches `key_schema`: pydantic would write a key
    pattern as `patternProperties`, which lets other keys through in JSON Schema."""
    schema = {
        "type": "object",
        "propertyNames": key_schema,
        "additionalProperties": value_schema,
        "maxProperties": max_items,
    }
    return Annotated[dict[key, value], Field(max_length=max_items), WithJsonSchema(schema)]


GpuLimits = mapping(
    GpuTypeName,
    GpuLimit,
    {"type": "string", "maxLength": names.MAX_LABEL, "pattern": names.LABEL_PATTERN},
    {"type": "integer", "minimum": 0, "maximum": MAX_GPUS},
    100,
)
Minutes = number(
    float,
    minimum=1,
    maximum=MAX_MINUTES,
    too_small="a time-limited share must last at least 1 minute",
    too_large="a share may last at most a year; leave the end empty for no end",
)


def _iso_text(value: Any) -> Any:
    if not isinstance(value, (str, datetime)):
        raise refuse("write the date and time as text, e.g. 2026-05-31T23:59:00+02:00")
    return value


# A date and time: ISO 8601 text only (a bare number is not read as seconds since 1970).
Timestamp = Annotated[datetime, Field(strict=False), BeforeValidator(_iso_text)]

# -- path and query parameters -------------------------------------------------------

Id = Annotated[int, Path(ge=1, le=MAX_ID, description="A numeric id")]
UserNamePath = Annotated[str, Path(max_length=names.MAX_USER_NAME, pattern=names.USER_NAME_PATTERN)]
LabelPath = Annotated[str, Path(max_length=names.MAX_LABEL, pattern=names.LABEL_PATTERN)]
DeviceIdPath = Annotated[str, Path(min_length=1, max_length=100, pattern=TOKEN_PATTERN)]
UserNameQuery = Annotated[
    str | None, Query(max_length=names.MAX_USER_NAME, pattern=names.USER_NAME_PATTERN)
]
LabelQuery = Annotated[str | None, Query(max_length=names.MAX_LABEL, pattern=names.LABEL_PATTERN)]
# Free text to search by: one line, no NUL (PostgreSQL cannot compare it).
SearchQuery = Annotated[
    str,
    Query(max_length=MAX_QUERY, pattern=LINE_PATTERN, description="Part of a name"),
]


def filter_query(description: str, alias: str | None = None) -> Any:
    """An optional one-line text filter of at most 200 characters."""
    return Annotated[
        str | None,
        Query(alias=alias, max_length=200, pattern=LINE_PATTERN, description=description),
    ]


def id_query(description: str) -> Any:
    return Annotated[int | None, Query(ge=1, le=MAX_ID, description=description)]


def user_query(description: str) -> Any:
    """A required user name in the query string."""
    return Annotated[
        str,
        Query(
            max_length=names.MAX_USER_NAME,
            pattern=names.USER_NAME_PATTERN,
            description=description,
        ),
    ]
