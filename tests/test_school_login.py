"""Log in with the school's accounts (issue 29): a real OpenID provider (oidc-provider
from npm) and a real LDAP server (Debian's slapd) on loopback, and the controller in
this process (tests/inprocess.py) as their client.

Each attack of the issue is replayed through the real flow, and each must end on a
page that says what to do: a forged ID token (another audience, expired, `alg: none`,
HMAC with the provider's public key, a key the provider never published, a replayed
nonce), a replayed or foreign `state`, an unverified e-mail, a changed redirect URI,
an LDAP injection in the user name, an empty LDAP password.
"""

from __future__ import annotations

import json
import re
import shutil
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from .directory.servers import ADMIN_DN, ADMIN_PASSWORD, BASE_DN, OidcServer, Slapd
from .harness import free_port, reachable_dir
from .inprocess import InProcess

pytestmark = pytest.mark.skipif(
    (not shutil.which("slapd") and not shutil.which("/usr/sbin/slapd")) or not shutil.which("node"),
    reason="needs slapd (scripts/deps.sh --test) and node",
)

CLIENT_ID = "cgu-lab"
CLIENT_SECRET = "client-secret-for-tests"
LDAP_PASSWORD = "school-pass-1"
USERS = {
    "sub-anna": {
        "preferred_username": "anna.o",
        "password": "anna-pass",
        "email": "anna.o@school.test",
        "email_verified": True,
        "name": "Anna Oidc",
        "groups": ["students", "ml-101"],
    },
    "sub-tove": {
        "preferred_username": "tove.o",
        "password": "tove-pass",
        "email": "tove.o@school.test",
        "email_verified": True,
        "name": "Tove Teacher",
        "groups": ["staff-ai"],
    },
    "sub-eve": {
        "preferred_username": "eve.o",
        "password": "eve-pass",
        "email": "eve.o@school.test",
        "email_verified": False,
        "name": "Eve Unverified",
        "groups": [],
    },
    "sub-carl": {
        "preferred_username": "carl.o",
        "password": "carl-pass",
        "email": "carl.o@school.test",
        "email_verified": True,
        "name": "Carl Pre",
        "groups": [],
    },
    "sub-dora": {
        "preferred_username": "dora.o",
        "password": "dora-pass",
        "email": "dora.o@school.test",
        "email_verified": True,
        "name": "Dora Disabled",
        "groups": [],
    },
}


@pytest.fixture(scope="module")
def servers():
    controller_port, provider_port, ldap_port = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{controller_port}"
    oidc = OidcServer(
        provider_port,
        [
            {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "redirect_uris": [f"{base}/login/school/school/callback"],
                "post_logout_redirect_uris": [f"{base}/login"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }
        ],
        json.loads(json.dumps(USERS)),
    )
    slapd = Slapd(ldap_port, LDAP_PASSWORD)
    yield base, oidc, slapd
    oidc.stop()
    slapd.stop()


@pytest.fixture(scope="module")
def site(servers):
    base, oidc, slapd = servers
    providers = [
        {
            "kind": "oidc",
            "id": "school",
            "name": "Test school",
            "issuer": oidc.issuer,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "scopes": ["openid", "email", "profile", "groups"],
        },
        {
            "kind": "ldap",
            "id": "staff-ldap",
            "name": "School LDAP",
            "url": slapd.url,
            "start_tls": True,
            "ca_file": str(slapd.ca),
            "search_base": BASE_DN,
            "search_filter": "(&(objectClass=inetOrgPerson)(uid={login}))",
            "bind_dn": ADMIN_DN,
            "bind_password": ADMIN_PASSWORD,
            "group_base": f"ou=groups,{BASE_DN}",
            "group_filter": "(member={dn})",
            "disabled_filter": "(description=disabled)",
        },
    ]
    folder = reachable_dir()
    app = InProcess(
        folder / "data", public_url=base, school_providers=json.dumps(providers)
    ).start()
    app.create_user("boss", "admin")
    app.create_user("teach", "teacher")
    admin = app.client("boss")
    admin.post("/api/groups", json={"name": "ml-101"}).raise_for_status()
    for rule in (
        {"source": "claim", "attribute": "groups", "value": "staff-ai", "role": "teacher"},
        {"source": "claim", "attribute": "groups", "value": "ml-101", "course": "ml-101"},
        {"source": "group", "value": "staff-ai", "role": "teacher"},
        {"source": "group", "value": "ml-101", "course": "ml-101"},
    ):
        admin.post("/api/school-login/rules", json=rule).raise_for_status()
    yield app
    app.stop()
    shutil.rmtree(folder, ignore_errors=True)


def browser(site) -> httpx.Client:
    return site.anonymous(follow_redirects=False)


def walk(site, oidc, login: str, password: str, client=None, start: str = "/login/school/school"):
    """A browser's way: cgu-lab's button, the provider's own login page, back to the
    callback. Returns (the browser, the callback URL, the callback's answer)."""
    client = client or browser(site)
    idp = httpx.Client(follow_redirects=False, timeout=30)
    answer = client.get(start)
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith(oidc.issuer), location
    for _ in range(20):
        if location.startswith(site.url):
            break
        page = idp.get(location)
        if page.status_code == 200 and 'name="login"' in page.text:
            action = re.search(r'action="([^"]+)"', page.text).group(1)
            page = idp.post(urljoin(location, action), data={"login": login, "password": password})
        assert page.status_code in (302, 303), (page.status_code, page.text[:500])
        location = urljoin(location, page.headers["location"])
    callback = location[len(site.url) :]
    return client, callback, client.get(callback)


def refused_page(answer, status: int, code: str) -> str:
    assert answer.status_code == status, (answer.status_code, answer.text[-800:])
    assert answer.headers["content-type"].startswith("text/html")
    assert f'data-code="{code}"' in answer.text, answer.text[-800:]
    assert 'href="/login"' in answer.text  # a way on
    assert "Traceback" not in answer.text
    return answer.text


def me(client) -> httpx.Response:
    return client.get("/api/me")


# -- OpenID Connect ------------------------------------------------------------------


def test_a_student_logs_in_with_the_school_and_lands_on_my_notebooks(site, servers):
    _, oidc, _ = servers
    client, _, answer = walk(site, oidc, "anna.o", "anna-pass")
    assert answer.status_code == 303 and answer.headers["location"] == "/notebooks"
    who = me(client).json()
    assert who["name"] == "anna.o" and who["role"] == "student", who
    assert who["display_name"] == "Anna Oidc"
    assert [g["name"] for g in who.get("groups", [])] == ["ml-101"] or "ml-101" in json.dumps(who)
    # no password of their own: the password form does not let them in
    form = browser(site).post(
        "/login", data={"name": "anna.o", "password": ""}, headers={"Origin": site.url}
    )
    assert form.status_code in (400, 401)


def test_a_staff_claim_makes_a_teacher_and_later_logins_update_the_role(site, servers):
    _, oidc, _ = servers
    client, _, answer = walk(site, oidc, "tove.o", "tove-pass")
    assert answer.status_code == 303
    assert me(client).json()["role"] == "teacher"
    admin = site.client("boss")
    rules = admin.get("/api/school-login").json()["rules"]
    staff = next(r for r in rules if r["value"] == "staff-ai" and r["source"] == "claim")
    assert admin.delete(f"/api/school-login/rules/{staff['id']}").status_code == 204
    again, _, answer = walk(site, oidc, "tove.o", "tove-pass")
    assert me(again).json()["role"] == "student"
    admin.post(
        "/api/school-login/rules",
        json={"source": "claim", "attribute": "groups", "value": "staff-ai", "role": "teacher"},
    ).raise_for_status()
    audit = admin.get("/api/audit", params={"action": "user.updated"}).text
    assert "tove.o" in audit


def test_the_redirect_uri_is_the_configured_one_whatever_the_host(site, servers):
    base, _oidc, _ = servers
    answer = browser(site).get("/login/school/school", headers={"Host": "evil.example"})
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    assert query["redirect_uri"] == [f"{base}/login/school/school/callback"]
    assert query["code_challenge_method"] == ["S256"] and query["nonce"] and query["state"]
    # and the provider itself takes only that exact URI
    changed = answer.headers["location"].replace("%2Fcallback", "%2Fcallback%2F..%2Fx")
    refused = httpx.get(changed, follow_redirects=True)
    assert refused.status_code == 400 and "redirect_uri" in refused.text


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        ("audience", "wrong_audience"),
        ("expired", "token_expired"),
        ("none", "bad_signature"),
        ("hs256-public", "bad_signature"),
        ("foreign-key", "bad_signature"),
        ("replay", "nonce_mismatch"),
    ],
)
def test_a_forged_id_token_is_refused(site, servers, mode, code):
    _, oidc, _ = servers
    walk(site, oidc, "anna.o", "anna-pass")  # a real token for "replay" to send again
    oidc.control("forge", mode=mode)
    client, _, answer = walk(site, oidc, "anna.o", "anna-pass")
    refused_page(answer, 401, code)
    assert me(client).status_code == 401


def test_a_replayed_or_foreign_state_is_refused(site, servers):
    _, oidc, _ = servers
    client, callback, answer = walk(site, oidc, "anna.o", "anna-pass")
    assert answer.status_code == 303
    refused_page(browser(site).get(callback), 400, "state_unknown")
    refused_page(client.get(callback), 400, "state_unknown")
    # started in one browser, finished in another (login CSRF): refused
    first = browser(site)
    location = first.get("/login/school/school").headers["location"]
    state = parse_qs(urlsplit(location).query)["state"][0]
    other = browser(site).get(f"/login/school/school/callback?state={state}&code=x")
    refused_page(other, 400, "state_foreign")


def test_an_unverified_email_is_refused(site, servers):
    _, oidc, _ = servers
    _, _, answer = walk(site, oidc, "eve.o", "eve-pass")
    assert "verify it there" in refused_page(answer, 403, "email_unverified")


def test_keys_rotate_and_logins_go_on(site, servers):
    _, oidc, _ = servers
    _, _, answer = walk(site, oidc, "anna.o", "anna-pass")
    assert answer.status_code == 303
    site.clock.advance(seconds=1.1)  # the client refetches a key set at most once a second
    new = oidc.control("rotate")["kid"]
    _client, _, answer = walk(site, oidc, "anna.o", "anna-pass")
    assert answer.status_code == 303, answer.text[-500:]
    keys = httpx.get(f"{oidc.issuer}/jwks").json()["keys"]
    assert keys[0]["kid"] == new and len(keys) == 2


def test_pre_enrolment_by_email_is_taken_at_the_first_login(site, servers):
    _, oidc, _ = servers
    admin = site.client("boss")
    bad = admin.post("/api/groups/ml-101/pre-enrolments", json={"csv": "email\nnot-an-address\n"})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid"
    done = admin.post(
        "/api/groups/ml-101/pre-enrolments", json={"csv": "email,name\nCarl.O@school.test,Carl\n"}
    )
    assert done.json()["added"] == ["carl.o@school.test"], done.text
    assert admin.get("/api/groups/ml-101/pre-enrolments").json() == ["carl.o@school.test"]
    _client, _, answer = walk(site, oidc, "carl.o", "carl-pass")
    assert answer.status_code == 303
    members = admin.get("/api/groups/ml-101/members").text
    assert "carl.o" in members
    assert admin.get("/api/groups/ml-101/pre-enrolments").json() == []


def test_a_teacher_cannot_give_a_directory_user_a_password(site, servers):
    _, oidc, _ = servers
    walk(site, oidc, "anna.o", "anna-pass")
    admin = site.client("boss")
    admin.put("/api/groups/ml-101/members/teach", json={"manager": True})
    teacher = site.client("teach")
    answer = teacher.post("/api/users/anna.o/password")
    assert answer.status_code == 403, answer.text
    assert "school" in answer.json()["message"]


def test_a_user_disabled_at_the_provider_loses_their_sessions_at_the_next_check(site, servers):
    _, oidc, _ = servers
    client, _, _answer = walk(site, oidc, "dora.o", "dora-pass")
    assert me(client).status_code == 200
    site.call(site.platform.school_login.check_once)
    assert me(client).status_code == 200  # still known: nothing ends
    oidc.control("disable", sub="sub-dora")
    ended = site.call(site.platform.school_login.check_once)
    assert "dora.o" in ended
    assert me(client).status_code == 401


def test_log_out_offers_the_providers_end_session(site, servers):
    _, oidc, _ = servers
    client, _, _ = walk(site, oidc, "anna.o", "anna-pass")
    page = client.get("/account").text
    csrf = re.search(r'name="csrf-token" content="([^"]*)"', page).group(1)
    out = client.post("/logout", data={"csrf": csrf}, headers={"Origin": site.url})
    assert out.headers["location"] == "/login?signed_out=school"
    assert me(client).status_code == 401
    login = client.get(out.headers["location"]).text
    assert f"{oidc.issuer}/session/end?client_id={CLIENT_ID}" in login.replace("&amp;", "&")


def test_the_login_page_offers_each_school_login(site):
    page = browser(site).get("/login").text
    assert 'href="/login/school/school' in page and "Log in with Test school" in page
    assert 'action="/login/school/staff-ldap"' in page


# -- LDAP ----------------------------------------------------------------------------


def ldap_login(site, name: str, password: str, client=None):
    client = client or browser(site)
    answer = client.post(
        "/login/school/staff-ldap",
        data={"name": name, "password": password},
        headers={"Origin": site.url},
    )
    return client, answer


def test_ldap_student_and_staff_get_their_role_and_course(site):
    client, answer = ldap_login(site, "anna", LDAP_PASSWORD)
    assert answer.status_code == 303, answer.text[-500:]
    who = me(client).json()
    assert (who["name"], who["role"]) == ("anna", "student")
    assert "ml-101" in json.dumps(who)
    client, answer = ldap_login(site, "tove", LDAP_PASSWORD)
    assert me(client).json()["role"] == "teacher"


def test_ldap_wrong_password_and_empty_password_are_refused(site):
    _, answer = ldap_login(site, "olle", "wrong")
    refused_page(answer, 401, "wrong_credentials")
    _, answer = ldap_login(site, "olle", "")
    refused_page(answer, 400, "password_missing")


@pytest.mark.parametrize(
    "name", ["*", "anna)(uid=*", "*)(|(objectClass=*", "ann*", "a\\2a", "x\x00"]
)
def test_ldap_injection_in_the_user_name_is_refused(site, name):
    client, answer = ldap_login(site, name, LDAP_PASSWORD)
    assert "cannot contain" in refused_page(answer, 400, "invalid_name")
    assert me(client).status_code == 401


def test_an_ldap_user_disabled_in_the_directory_loses_their_sessions(site, servers):
    _, _, slapd = servers
    client, answer = ldap_login(site, "disa", LDAP_PASSWORD)
    assert me(client).status_code == 200
    slapd.modify(
        f"dn: uid=disa,ou=students,{BASE_DN}\nchangetype: modify\nadd: description\n"
        "description: disabled\n"
    )
    assert "disa" in site.call(site.platform.school_login.check_once)
    assert me(client).status_code == 401
    _, answer = ldap_login(site, "disa", LDAP_PASSWORD)
    refused_page(answer, 403, "account_disabled")
