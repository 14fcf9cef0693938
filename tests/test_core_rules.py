"""Small core rules: amounts, names, states, redirects, rosters, roles."""

import pytest

from cgu_lab.core import roles
from cgu_lab.core.errors import Conflict, Forbidden, Invalid
from cgu_lab.core.lifecycle import State, can_move, holds_resources, require_move
from cgu_lab.core.names import check_label, check_user_name
from cgu_lab.core.paths import relative_path
from cgu_lab.core.resources import Resources, format_memory, parse_cpu, parse_memory
from cgu_lab.core.roles import Principal, Role
from cgu_lab.core.roster import parse_roster


@pytest.mark.parametrize(
    ("text", "milli"), [("2", 2000), ("0.5", 500), ("500m", 500), (1.5, 1500), ("  3 ", 3000)]
)
def test_parse_cpu(text, milli):
    assert parse_cpu(text) == milli


@pytest.mark.parametrize("text", ["", "two", "-1", "0", "5x", "m"])
def test_parse_cpu_rejects(text):
    with pytest.raises(Invalid):
        parse_cpu(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("2Gi", 2 * 2**30),
        ("2GiB", 2 * 2**30),
        ("512Mi", 512 * 2**20),
        ("1G", 10**9),
        ("1.5gi", int(1.5 * 2**30)),
        (1024, 1024),
        ("100", 100),
    ],
)
def test_parse_memory(text, size):
    assert parse_memory(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-5G", "0", "2 XB", "1e9"])
def test_parse_memory_rejects(text):
    with pytest.raises(Invalid):
        parse_memory(text)


def test_format_memory():
    assert format_memory(2 * 2**30) == "2 GiB"
    assert format_memory(1536 * 2**20) == "1.5 GiB"
    assert format_memory(10) == "10 B"


def test_resources_add_up_per_gpu_type():
    total = Resources.total(
        [
            Resources.for_notebook(1000, 10, "a", 1),
            Resources.for_notebook(500, 5, "a", 2),
            Resources.for_notebook(500, 5, None, 0),
        ]
    )
    assert total == Resources(cpu_milli=2000, memory=20, gpus={"a": 3}, notebooks=3)


@pytest.mark.parametrize("name", ["alice", "b1234567", "j.doe", "a_b-c", "x"])
def test_user_names_accepted(name):
    assert check_user_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Alice",
        "../etc",
        "a..b",
        "-a",
        "a/",
        "a b",
        "é",
        "a" * 65,
        "auto-start",
        "api",
        "a\x00b",
    ],
)
def test_user_names_refused(name):
    with pytest.raises(Invalid):
        check_user_name(name)


@pytest.mark.parametrize("name", ["nb", "my-notebook-2", "a" * 63])
def test_labels_accepted(name):
    assert check_label(name, "notebook") == name


@pytest.mark.parametrize("name", ["", "-x", "x-", "A", "a.b", "a_b", "a" * 64, "../x"])
def test_labels_refused(name):
    with pytest.raises(Invalid, match="not a valid notebook name"):
        check_label(name, "notebook")


def test_lifecycle_moves():
    assert can_move(State.STOPPED, State.STARTING)
    assert not can_move(State.STOPPED, State.RUNNING)
    assert holds_resources(State.STOPPING)
    assert not holds_resources(State.STOPPED)
    with pytest.raises(Conflict, match="is stopping"):
        require_move(State.STOPPING, State.STARTING, "nb")


STUDENT = frozenset({Role.STUDENT})


def test_roster_parses_and_defaults():
    rows = parse_roster(
        "username,display_name,email\nS1001,Ada Lovelace,ada@x.edu\n\ns1002,,\n", STUDENT
    )
    assert [(r.name, r.display_name, r.email, r.role, r.password) for r in rows] == [
        ("s1001", "Ada Lovelace", "ada@x.edu", Role.STUDENT, None),
        ("s1002", "s1002", "", Role.STUDENT, None),
    ]


def test_roster_reports_all_problems_with_lines():
    text = (
        "username,role,password\nok1,student,\nbad name,student,\nok1,student,\n"
        "x2,teacher,\nx3,student,short\n"
    )
    with pytest.raises(Invalid) as error:
        parse_roster(text, STUDENT)
    message = error.value.message
    assert "nothing was imported" in message
    assert "line 3" in message and "line 4: 'ok1' also appears on line 2" in message
    assert "line 5: you may not create teacher accounts" in message
    assert "line 6: the password must have at least 8 characters" in message


@pytest.mark.parametrize("text", ["", "email\nx@y\n", "username\n"])
def test_roster_refuses_empty_or_headerless(text):
    with pytest.raises(Invalid):
        parse_roster(text, STUDENT)


def test_roles():
    admin = Principal(1, "root", Role.ADMIN)
    ta = Principal(2, "ta", Role.TA, groups=frozenset({7}), managed_groups=frozenset({7}))
    student = Principal(3, "s", Role.STUDENT, groups=frozenset({7}))
    assert roles.can_manage_group(admin, 9) and roles.can_manage_group(ta, 7)
    assert not roles.can_manage_group(ta, 8) and not roles.can_manage_group(student, 7)
    roles.require_create_role(ta, Role.STUDENT)
    with pytest.raises(Forbidden):
        roles.require_create_role(ta, Role.TEACHER)
    with pytest.raises(Forbidden):
        roles.require_create_role(student, Role.STUDENT)
    assert roles.manages_user(ta, frozenset({7, 8})) and not roles.manages_user(ta, frozenset({8}))
    with pytest.raises(Forbidden):
        roles.check_can_be_manager(Role.STUDENT, "s")
    assert roles.may_manage_notebook(student, 3) and not roles.may_manage_notebook(student, 4)
    assert roles.may_manage_notebook(admin, 4)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("hw1.ipynb", "hw1.ipynb"),
        ("a/b/c.txt", "a/b/c.txt"),
        ("./a//b/", "a/b"),
        ("", ""),
        ("é/ü.txt", "é/ü.txt"),
    ],
)
def test_relative_paths(path, expected):
    assert relative_path(path) == expected


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../x", "a/../../b", "a/..", "a\\b", "a\x00b", "a\nb", "x" * 1025]
)
def test_relative_paths_refused(path):
    with pytest.raises(Invalid):
        relative_path(path)
