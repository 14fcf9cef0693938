"""Reading a class roster (CSV) into accounts to create.

Every row is checked before anything is created, and all problems are
reported together with their line numbers, so a teacher fixes the file once
and an import either happens whole or not at all.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from .errors import Invalid
from .names import check_user_name
from .roles import Role

MAX_ROWS = 2000
_USER_COLUMNS = ("username", "user", "login", "student_id")


@dataclass(frozen=True)
class RosterRow:
    line: int
    name: str
    display_name: str
    email: str
    role: Role
    password: str | None


def parse_roster(text: str, allowed_roles: frozenset[Role]) -> list[RosterRow]:
    """Parse CSV with a header naming at least a user column.

    Recognised columns: username (or user/login/student_id), display_name (or
    full_name/name), email,
    role (default student) and password (optional; missing ones are generated).
    A file the csv module cannot read (a stray carriage return inside a field)
    is refused with the reader's own reason.
    """
    try:
        return _parse(text, allowed_roles)
    except csv.Error as error:
        raise Invalid(f"the class list is not readable CSV: {error}") from None


def _parse(text: str, allowed_roles: frozenset[Role]) -> list[RosterRow]:
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    if not reader.fieldnames:
        raise Invalid(
            "the roster is empty: the first line must name the columns, e.g. username,email"
        )
    columns = {c.strip().lower(): c for c in reader.fieldnames if c}
    user_column = next((columns[c] for c in _USER_COLUMNS if c in columns), None)
    if user_column is None:
        raise Invalid("the roster needs a 'username' column")

    def cell(row: dict, key: str) -> str:
        column = columns.get(key)
        return (row.get(column) or "").strip() if column else ""

    rows: list[RosterRow] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(reader, start=2):
        if len(rows) + len(problems) >= MAX_ROWS:
            raise Invalid(f"a roster may hold at most {MAX_ROWS} rows; split the file")
        name = (raw.get(user_column) or "").strip().lower()
        if not name and not any((v or "").strip() for v in raw.values() if isinstance(v, str)):
            continue  # blank line
        try:
            check_user_name(name)
        except Invalid as error:
            problems.append(f"line {index}: {error.message}")
            continue
        if name in seen:
            problems.append(f"line {index}: '{name}' also appears on line {seen[name]}")
            continue
        seen[name] = index
        role_text = cell(raw, "role").lower() or Role.STUDENT.value
        try:
            role = Role(role_text)
        except ValueError:
            problems.append(f"line {index}: unknown role '{role_text}'")
            continue
        if role not in allowed_roles:
            problems.append(f"line {index}: you may not create {role.value} accounts")
            continue
        password = cell(raw, "password") or None
        if password is not None and len(password) < 8:
            problems.append(f"line {index}: the password must have at least 8 characters")
            continue
        rows.append(
            RosterRow(
                line=index,
                name=name,
                display_name=(
                    cell(raw, "display_name") or cell(raw, "full_name") or cell(raw, "name") or name
                ),
                email=cell(raw, "email"),
                role=role,
                password=password,
            )
        )
    if problems:
        raise Invalid("the roster has problems; nothing was imported: " + "; ".join(problems))
    if not rows:
        raise Invalid("the roster has no rows below its header")
    return rows
