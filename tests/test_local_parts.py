"""Pure parts of the local backend: account names and CPU choice."""

from cgu_lab.backends.local_accounts import MAX_UNIX_NAME, unix_name
from cgu_lab.backends.local_limits import pick_cpus
from cgu_lab.controller.proxy import origin_matches, parse_path, session_cookie


def test_unix_names_are_valid_and_distinct():
    assert unix_name("alice") == "cgu-alice"
    long_a, long_b = unix_name("a" * 60), unix_name("a" * 59 + "b")
    assert long_a != long_b and len(long_a) <= MAX_UNIX_NAME and len(long_b) <= MAX_UNIX_NAME
    assert unix_name("j.doe") != unix_name("j-doe")
    assert all(c.isalnum() or c in "-_" for c in unix_name("j.doe"))


def test_pick_cpus_prefers_idle_cores():
    assert pick_cpus(1000, [], available=[0, 1, 2, 3]) == [0]
    assert pick_cpus(1500, [0, 0, 1], available=[0, 1, 2, 3]) == [2, 3]
    assert pick_cpus(64000, [], available=[0, 1]) == [0, 1]
    assert pick_cpus(100, [0], available=[0, 1]) == [1]


def test_proxy_path_parsing():
    assert parse_path("/notebook/alice/nb1/lab") == ("alice", "nb1", "/lab")
    assert parse_path("/notebook/alice/nb1") == ("alice", "nb1", "")
    assert parse_path("/notebook/alice") is None
    assert parse_path("/api/x") is None


def test_session_cookie_is_taken_out():
    value, rest = session_cookie("_xsrf=abc; cgu-lab-session=SECRET; theme=dark")
    assert value == "SECRET"
    assert rest == "_xsrf=abc; theme=dark"
    assert session_cookie("") == (None, "")


def test_origin_check():
    assert origin_matches("", "lab.example.edu")
    assert origin_matches("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert origin_matches("https://lab.example.edu", "lab.example.edu")
    assert not origin_matches("https://evil.example", "lab.example.edu")
    assert not origin_matches("null", "lab.example.edu")
