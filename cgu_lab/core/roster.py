"""Reading a class roster (CSV) into accounts to create, strictly.

A roster is refused whole unless every line is right, and every problem is
reported with its line number, so a teacher fixes the file once and an
import either happens whole or not at all (the controller validates before it
writes anything, in one transaction).

The file is read one physical line at a time, each line with the csv module
in strict mode. No roster field ever holds a line break, so a quote that is
opened and not closed is reported on its own line, instead of swallowing the
rest of the file into one field (and one account whose display name is the
rest of the file), as reading the whole text with one csv reader would.

Rules: the first non-blank line is a header of known column names (one of
them the user name); every other non-blank line has exactly as many fields as
the header; user names follow `names.check_user_name`; e-mail addresses have
one '@' and a dot in the domain and no spaces; nobody appears twice; a role
is one the importer may create; passwords are 8 characters or more; the file
is at most `MAX_BYTES` and `MAX_ROWS` rows.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from .errors import Invalid
from .names import MAX_EMAIL, MAX_USER_NAME, check_display_name, check_user_name
from .roles import Role

MAX_ROWS = 2000
MAX_BYTES = 1_000_000
MIN_PASSWORD = 8
MAX_PASSWORD = 1024
# Problems quoted in the message; the details list every one of them.
MESSAGE_PROBLEMS = 10

# Accepted column names, each with the one it stands for.
COLUMNS = {
    "username": "username",
    "user": "username",
    "login": "username",
    "student_id": "username",
    "display_name": "display_name",
    "full_name": "display_name",
    "name": "display_name",
    "email": "email",
    "e-mail": "email",
    "role": "role",
    "password": "password",
}
KNOWN = "username, display_name, email, role and password"
_LINES = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class RosterRow:
    line: int
    name: str
    display_name: str
    email: str
    role: Role
    password: str | None


@dataclass(frozen=True)
class Problem:
    """What is wrong on one line (`line` None: with the whole file)."""

    line: int | None
    reason: str

    def __str__(self) -> str:
        return self.reason if self.line is None else f"line {self.line}: {self.reason}"

    def as_dict(self) -> dict:
        return {"line": self.line, "reason": self.reason}


class RosterInvalid(Invalid):
    """A roster refused whole; `details["errors"]` lists every `{line, reason}`."""

    code = "invalid_roster"

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = "; ".join(str(p) for p in problems[:MESSAGE_PROBLEMS])
        more = len(problems) - MESSAGE_PROBLEMS
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(
            f"the class list has {count}; nothing was imported: {shown}"
            + (f"; and {more} more" if more > 0 else ""),
            errors=[p.as_dict() for p in problems],
        )


def _short(value: str, limit: int = 40) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def email_problem(value: str) -> str | None:
    """Why `value` is not an e-mail address, or None (an empty one is allowed)."""
    if not value:
        return None
    wrong = f"'{_short(value)}' is not an e-mail address"
    if len(value) > MAX_EMAIL:
        return f"an e-mail address may have at most {MAX_EMAIL} characters"
    if any(c.isspace() for c in value):
        return f"{wrong}: it contains a space"
    if any(c in "<>" or ord(c) < 32 or ord(c) == 127 for c in value):
        return f"{wrong}: it contains '<', '>' or a control character"
    if value.count("@") != 1:
        return f"{wrong}: it needs exactly one '@', like ada@example.edu"
    local, domain = value.split("@")
    if not local or "." not in domain or ".." in domain or domain[0] == "." or domain[-1] == ".":
        return f"{wrong}: write it like ada@example.edu"
    return None


def _cells(text: str) -> list[str] | str:
    """The fields of one line, or why the line is not readable CSV."""
    try:
        rows = list(csv.reader([text], strict=True))
    except csv.Error as error:
        if "unexpected end of data" in str(error):
            return 'a quote (") opens a field and is not closed on this line'
        if "expected after" in str(error):
            return 'text follows a closing quote ("): quote the whole field or none of it'
        return f"not readable CSV: {error}"
    return [cell.strip() for cell in rows[0]] if rows else []


def _header(line: int, cells: list[str]) -> tuple[list[str], list[Problem]]:
    columns: list[str] = []
    problems: list[Problem] = []
    for position, raw in enumerate(cells, start=1):
        name = raw.lower()
        column = COLUMNS.get(name)
        if not name:
            problems.append(Problem(line, f"column {position} of the header has no name"))
        elif column is None:
            problems.append(
                Problem(line, f"unknown column '{_short(raw)}': the columns are {KNOWN}")
            )
        elif column in columns:
            problems.append(Problem(line, f"column '{raw}' repeats the {column} column"))
        columns.append(column or "")
    if not problems and "username" not in columns:
        problems.append(Problem(line, "the header needs a 'username' column"))
    return columns, problems


def _row(
    line: int, values: dict[str, str], allowed_roles: frozenset[Role]
) -> tuple[RosterRow | None, list[Problem]]:
    problems: list[Problem] = []
    name = values["username"].lower()
    if not name:
        problems.append(Problem(line, "the user name is empty"))
    elif len(name) > MAX_USER_NAME:
        problems.append(
            Problem(line, f"the user name has {len(name)} characters; at most {MAX_USER_NAME}")
        )
    else:
        try:
            check_user_name(name)
        except Invalid as error:
            problems.append(Problem(line, error.message))
    display_name = values.get("display_name", "")
    try:
        check_display_name(display_name)
    except Invalid as error:
        problems.append(Problem(line, error.message))
    email = values.get("email", "")
    if (reason := email_problem(email)) is not None:
        problems.append(Problem(line, reason))
    role_text = values.get("role", "").lower() or Role.STUDENT.value
    try:
        role = Role(role_text)
    except ValueError:
        role = None
        problems.append(
            Problem(line, f"unknown role '{_short(role_text)}': student, ta, teacher or admin")
        )
    if role is not None and role not in allowed_roles:
        problems.append(Problem(line, f"you may not create {role.value} accounts"))
    password = values.get("password", "") or None
    if password is not None and not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        problems.append(
            Problem(
                line,
                f"the password must have at least {MIN_PASSWORD} characters"
                if len(password) < MIN_PASSWORD
                else f"the password may have at most {MAX_PASSWORD} characters",
            )
        )
    if problems or role is None:
        return None, problems
    return RosterRow(line, name, display_name or name, email, role, password), []


def _check_size(text: str) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise RosterInvalid(
            [Problem(None, f"the file has {size:,} bytes; a class list may have {MAX_BYTES:,}")]
        )


def _numbered_lines(text: str) -> list[tuple[int, str]]:
    """The non-blank lines with their numbers, counted as an editor shows them."""
    lines = _LINES.split(text.removeprefix("\ufeff"))
    if lines and lines[-1] == "":
        lines.pop()
    return [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]


def _read_header(line: int, cells: list[str] | str) -> list[str]:
    """The header's columns; a bad header refuses the file at once, its rows being unreadable."""
    if isinstance(cells, str):
        raise RosterInvalid([Problem(line, f"the header is {cells}")])
    columns, problems = _header(line, cells)
    if problems:
        raise RosterInvalid(problems)
    return columns


def _repeats(
    line: int, values: dict[str, str], names: dict[str, int], emails: dict[str, int]
) -> list[Problem]:
    """A user name or e-mail address seen on an earlier line; records this line's."""
    problems: list[Problem] = []
    name = values["username"].lower()
    if name and name in names:
        problems.append(Problem(line, f"'{_short(name)}' also appears on line {names[name]}"))
    elif name:
        names[name] = line
    email = values.get("email", "").lower()
    if email and email in emails:
        problems.append(Problem(line, f"e-mail {_short(email)} is also on line {emails[email]}"))
    elif email:
        emails[email] = line
    return problems


def _body_row(
    line: int,
    cells: list[str],
    columns: list[str],
    allowed_roles: frozenset[Role],
    names: dict[str, int],
    emails: dict[str, int],
) -> tuple[RosterRow | None, list[Problem]]:
    """One data line's account, or every problem with it (repeats of earlier lines included)."""
    if len(cells) != len(columns):
        fields = f"{len(cells)} field{'s' if len(cells) != 1 else ''}"
        where = f"the header names {len(columns)} ({', '.join(columns)})"
        return None, [Problem(line, f"{fields} where {where}")]
    values = dict(zip(columns, cells, strict=True))
    row, problems = _row(line, values, allowed_roles)
    return row, problems + _repeats(line, values, names, emails)


def parse_roster(text: str, allowed_roles: frozenset[Role]) -> list[RosterRow]:
    """The rows of a roster, or RosterInvalid naming every bad line and why.

    Recognised columns: username (or user/login/student_id), display_name (or
    full_name/name), email (or e-mail), role (default student) and password
    (optional; missing ones are generated). Blank lines are skipped.
    """
    _check_size(text)
    columns: list[str] | None = None
    rows: list[RosterRow] = []
    problems: list[Problem] = []
    names: dict[str, int] = {}
    emails: dict[str, int] = {}
    count = 0
    for number, text_line in _numbered_lines(text):
        cells = _cells(text_line)
        if columns is None:
            columns = _read_header(number, cells)
            continue
        if isinstance(cells, str):
            problems.append(Problem(number, cells))
            continue
        if not any(cells):
            continue  # a line of empty fields, as spreadsheets write
        count += 1
        if count > MAX_ROWS:
            problems.append(
                Problem(number, f"a class list may hold at most {MAX_ROWS} rows; split the file")
            )
            break
        row, row_problems = _body_row(number, cells, columns, allowed_roles, names, emails)
        problems += row_problems
        if row is not None:
            rows.append(row)
    if columns is None:
        raise RosterInvalid(
            [
                Problem(
                    None,
                    "the file is empty: the first line must name the columns, "
                    "e.g. username,display_name,email",
                )
            ]
        )
    if problems:
        raise RosterInvalid(problems)
    if not rows:
        raise RosterInvalid([Problem(None, "the class list has no rows below its header")])
    return rows
