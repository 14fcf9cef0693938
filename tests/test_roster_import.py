"""The strict class-list import: every malformed line is refused with its number and why,
and a refused import creates nothing.

The pure rules (`core.roster`) are checked on the files teachers actually sent: an
unclosed quote that once swallowed the rest of the file into one display name, rows
with a field too many or too few, addresses without a domain, the same student twice.
The API tests run on the controller app in the test's process (conftest's `in_process`).
"""

from __future__ import annotations

import pytest

from cgu_lab.core.errors import Invalid
from cgu_lab.core.roles import Role
from cgu_lab.core.roster import MAX_BYTES, MAX_ROWS, RosterInvalid, email_problem, parse_roster

STUDENTS = frozenset({Role.STUDENT})
HEADER = "username,display_name,email\n"


def problems(text: str, allowed: frozenset[Role] = STUDENTS) -> dict[int | None, list[str]]:
    """Parse `text` expecting a refusal; the reasons by line."""
    with pytest.raises(RosterInvalid) as refused:
        parse_roster(text, allowed)
    error = refused.value
    assert error.status == 400 and error.code == "invalid_roster"
    assert "nothing was imported" in error.message
    found: dict[int | None, list[str]] = {}
    for item in error.details["errors"]:
        assert set(item) == {"line", "reason"}
        found.setdefault(item["line"], []).append(item["reason"])
    return found


def test_a_good_file_with_quotes_crlf_bom_and_blank_lines():
    text = (
        "\ufeffUsername,Display_Name,E-mail\r\n"
        'S1001,"Lovelace, Ada",ada@uni.example.edu\r\n'
        "\r\n"
        ",,\r\n"
        's1002,"Alan ""Prof"" Turing",\r\n'
        "s1003,,grace@uni.edu"
    )
    rows = parse_roster(text, STUDENTS)
    assert [(r.line, r.name, r.display_name, r.email, r.role) for r in rows] == [
        (2, "s1001", "Lovelace, Ada", "ada@uni.example.edu", Role.STUDENT),
        (5, "s1002", 'Alan "Prof" Turing', "", Role.STUDENT),
        (6, "s1003", "s1003", "grace@uni.edu", Role.STUDENT),
    ]


def test_an_unclosed_quote_is_its_own_line_and_swallows_nothing():
    text = HEADER + 's1,"Ada Lovelace,ada@x.edu\ns2,Bob,bob@x.edu\ns3,Cy,cy@x.edu\nbad name,,\n'
    found = problems(text)
    assert list(found) == [2, 5]
    assert "quote" in found[2][0] and "not closed" in found[2][0]
    assert "not a valid user name" in found[5][0]


def test_an_unclosed_quote_never_becomes_a_display_name():
    # The file that once created one account named by the rest of the file.
    text = HEADER + 's1,"Ada,ada@x.edu\n' + "".join(f"s{i},N{i},n{i}@x.edu\n" for i in range(2, 40))
    found = problems(text)
    assert list(found) == [2]


def test_text_after_a_closing_quote():
    found = problems(HEADER + 's1,"Ada"x,ada@x.edu\n')
    assert "closing quote" in found[2][0]


@pytest.mark.parametrize(
    ("line", "count"),
    [("s1,Ada,ada@x.edu,extra", 4), ("s1,Ada", 2), ("s1", 1), ("s1,Ada,a@x.edu,,", 5)],
)
def test_each_line_has_exactly_the_header_s_fields(line, count):
    found = problems(HEADER + "s0,Zed,z@x.edu\n" + line + "\n")
    assert list(found) == [3]
    fields = f"{count} field{'s' if count != 1 else ''}"
    assert found[3] == [f"{fields} where the header names 3 (username, display_name, email)"]


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("ada@x", "like ada@example.edu"),
        ("ada x@x.edu", "space"),
        ("a@b@x.edu", "exactly one '@'"),
        ("ada.x.edu", "exactly one '@'"),
        ("@x.edu", "like ada@example.edu"),
        ("ada@.edu", "like ada@example.edu"),
        ("ada@x.edu.", "like ada@example.edu"),
        ("ada@x..edu", "like ada@example.edu"),
        ("<b>@x.edu", "'<'"),
    ],
)
def test_invalid_e_mail_addresses(address, why):
    assert why in email_problem(address)
    found = problems(HEADER + f"s1,Ada,{address}\n")
    assert why in found[2][0]


def test_valid_and_empty_e_mail_addresses():
    for address in ("", "ada@x.edu", "a.b+tag@mail.uni.example.org", "x_y@sub-domain.io"):
        assert email_problem(address) is None, address


def test_duplicates_inside_the_file():
    text = HEADER + "s1,A,a@x.edu\ns2,B,b@x.edu\nS1,C,c@x.edu\ns3,D,B@X.EDU\n"
    found = problems(text)
    assert found == {
        4: ["'s1' also appears on line 2"],
        5: ["e-mail b@x.edu is also on line 3"],
    }


def test_user_names_display_names_roles_and_passwords():
    text = (
        "username,display_name,role,password\n"
        "bad name,Ada,student,\n"
        "admin,Root,student,\n"
        f"{'a' * 70},Long,student,\n"
        "s4,<script>,student,\n"
        "s5,Ok,teacher,\n"
        "s6,Ok,wizard,\n"
        "s7,Ok,student,short\n"
        ",Nobody,student,\n"
        "s9,Ok,student,long-enough-password\n"
    )
    found = problems(text)
    assert "not a valid user name" in found[2][0]
    assert "reserved" in found[3][0]
    assert found[4] == ["the user name has 70 characters; at most 64"]
    assert "'<', '>'" in found[5][0]
    assert found[6] == ["you may not create teacher accounts"]
    assert "unknown role 'wizard'" in found[7][0]
    assert found[8] == ["the password must have at least 8 characters"]
    assert found[9] == ["the user name is empty"]
    assert 10 not in found
    # An admin may create other roles; the same file then fails only where it is wrong.
    assert 6 not in problems(text, frozenset(Role))


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ("email,display_name", "needs a 'username' column"),
        ("username,shoe_size", "unknown column 'shoe_size'"),
        ("username,user", "repeats the username column"),
        ("username,,email", "column 2 of the header has no name"),
        ('username,"email', "the header is a quote"),
    ],
)
def test_the_header_is_required_and_known(header, why):
    found = problems(header + "\ns1,x\n")
    assert why in found[1][0]


@pytest.mark.parametrize("text", ["", "\n\n", "   \n"])
def test_an_empty_file(text):
    assert "the first line must name the columns" in problems(text)[None][0]


def test_a_header_without_rows():
    assert problems("username\n\n") == {None: ["the class list has no rows below its header"]}


def test_the_file_size_and_row_count_are_bounded():
    big = HEADER + ("s1,A," + "x" * 1000 + "\n") * (MAX_BYTES // 1000)
    found = problems(big)
    assert list(found) == [None] and "bytes" in found[None][0]
    many = HEADER + "".join(f"s{i},,\n" for i in range(MAX_ROWS + 5))
    found = problems(many)
    assert found == {
        MAX_ROWS + 2: [f"a class list may hold at most {MAX_ROWS} rows; split the file"]
    }
    assert len(parse_roster(HEADER + "".join(f"s{i},,\n" for i in range(MAX_ROWS)), STUDENTS)) == (
        MAX_ROWS
    )


def test_the_message_names_the_first_problems_and_counts_the_rest():
    text = HEADER + "".join(f"bad name{i},,\n" for i in range(15))
    with pytest.raises(RosterInvalid) as refused:
        parse_roster(text, STUDENTS)
    message = refused.value.message
    assert message.startswith("the class list has 15 problems; nothing was imported: line 2:")
    assert "line 11:" in message and "line 12:" not in message and message.endswith("and 5 more")
    assert len(refused.value.details["errors"]) == 15
    assert isinstance(refused.value, Invalid)


# -- through the API: refused whole, nothing created --------------------------------------

COURSE = "roster-course"
MALFORMED = (
    "username,display_name,email\n"
    "r-ok1,Ada,ada@x.edu\n"
    'r-ok2,"Bob,bob@x.edu\n'
    "r-ok3,Cy,cy@x.edu,extra\n"
    "r-ok4,Dee,dee@nowhere\n"
    "r-ok5,Eve,eve@x.edu\n"
    "r-ok1,Again,again@x.edu\n"
    "r-ok6\n"
)


@pytest.fixture(scope="module")
def course(teacher):
    teacher.ok("POST", "/api/groups", 201, json={"name": COURSE, "display_name": "Rosters"})
    return COURSE


def test_a_malformed_class_list_is_refused_whole_and_creates_nothing(course, teacher, admin):
    before = {m["name"] for m in teacher.ok("GET", f"/api/groups/{course}/members")}
    response = teacher.post(f"/api/groups/{course}/import", json={"csv": MALFORMED})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == "invalid_roster"
    assert "nothing was imported" in body["message"]
    lines = [e["line"] for e in body["details"]["errors"]]
    assert lines == [3, 4, 5, 7, 8]
    reasons = {e["line"]: e["reason"] for e in body["details"]["errors"]}
    assert "not closed" in reasons[3]
    assert reasons[4].startswith("4 fields")
    assert "e-mail" in reasons[5]
    assert "also appears on line 2" in reasons[7]
    assert reasons[8].startswith("1 field where")
    # Nothing at all: not the good lines, not the membership, not an audit of an import.
    for name in ("r-ok1", "r-ok2", "r-ok3", "r-ok4", "r-ok5", "r-ok6"):
        assert admin.get(f"/api/users/{name}").status_code == 404, name
    assert {m["name"] for m in teacher.ok("GET", f"/api/groups/{course}/members")} == before
    imports = admin.ok("GET", "/api/audit", params={"action": "group.imported"})
    assert not [e for e in imports if e["target"] == f"group:{course}"]
    # The same refusal for the admin's own import of accounts.
    refused = admin.post("/api/users/import", json={"csv": MALFORMED})
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_roster"
    assert admin.get("/api/users/r-ok1").status_code == 404


def test_the_corrected_file_imports_every_student(course, teacher, admin):
    fixed = "username,display_name,email\nr-ok1,Ada,ada@x.edu\nr-ok2,Bob,bob@x.edu\n"
    result = teacher.ok("POST", f"/api/groups/{course}/import", json={"csv": fixed})
    assert sorted(c["name"] for c in result["created"]) == ["r-ok1", "r-ok2"]
    assert all(c["one_time_password"] for c in result["created"])
    assert admin.ok("GET", "/api/users/r-ok2")["display_name"] == "Bob"
    events = admin.ok("GET", "/api/audit", params={"action": "group.imported"})
    assert [e for e in events if e["target"] == f"group:{course}"]
