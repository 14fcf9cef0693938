"""The web pages of group invitations, on the controller app in the test's process
(conftest's `in_process`; served over HTTP on loopback for the browser).

When a manager puts an existing account they do not fully manage into their group, the
account is invited instead (202, or `invited` in an import) and joins by accepting at
/api/me/invitations. These tests check that the pages carry what shows it: the group page's
pending invitations and import report, the course page's way to the members, the account
page's "Course invitations" and the banner of My notebooks, with the pages' CSP habits; that
the API answers with the fields the pages' scripts read; and, in Debian's Chromium driven over
the DevTools protocol (skipped without it), that the scripts really do it: a teacher's add and
import show the invitations and withdraw one, the student sees the banner, declines one and
accepts the other.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from .harness import PASSWORD, Session

COURSE = "inv-course"


@pytest.fixture(scope="module")
def course(teacher):
    teacher.ok("POST", "/api/groups", 201, json={"name": COURSE, "display_name": "Invited Course"})
    return COURSE


def check_page_habits(session: Session, html: str, script: str) -> None:
    """No inline script or style (strict CSP), labels point at fields, the script is served."""
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    assert not re.search(r"<[a-z][^>]*\sstyle=", html)
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "duplicate ids"
    assert set(re.findall(r'<label for="([^"]+)"', html)) <= set(ids)
    assert f'src="{script}"' in html
    assert session.get(script).status_code == 200


def test_group_page_shows_pending_invitations_and_invited_imports(teacher, course):
    response = teacher.get(f"/admin/groups/{course}")
    assert response.status_code == 200, response.text
    html = response.text
    for landmark in (
        'id="member-notice"',
        'id="invitations-card"',
        "Pending invitations",
        'id="invitations"',
        'id="import-enrolled"',
        'id="import-invited-box"',
        'id="import-invited"',
        "are invited instead",
    ):
        assert landmark in html, landmark
    check_page_habits(teacher, html, "/static/js/group.js")
    script = teacher.get("/static/js/group.js").text
    # The script tells a 202 invitation from a 200 join, and reads the import's `invited`.
    assert "code === 'invited'" in script and "result.invited" in script


def test_course_page_leads_to_members_and_invitations(teacher, course):
    html = teacher.get(f"/courses/{course}").text
    assert f'href="/admin/groups/{course}"' in html
    assert "Members and invitations" in html
    check_page_habits(teacher, html, "/static/js/course.js")


def test_account_page_has_course_invitations(alice):
    html = alice.get("/account").text
    for landmark in (
        'id="invitations"',
        "Course invitations",
        'id="invitation-rows"',
        'id="invitations-error"',
    ):
        assert landmark in html, landmark
    check_page_habits(alice, html, "/static/js/account.js")
    script = alice.get("/static/js/account.js").text
    assert "/api/me/invitations" in script and "'POST'" in script and "'DELETE'" in script


def test_account_with_a_one_time_password_answers_invitations_later(admin, login):
    created = admin.ok("POST", "/api/users", 201, json={"name": "inv-newcomer"})
    newcomer = login("inv-newcomer", password=created["one_time_password"])
    # The API refuses everything but the password change until then: no section.
    assert newcomer.get("/api/me/invitations").status_code == 403
    html = newcomer.get("/account").text
    assert 'id="password-form"' in html
    assert 'id="invitation-rows"' not in html


def test_my_notebooks_has_an_invitations_banner(alice):
    html = alice.get("/notebooks").text
    assert re.search(r'<p id="invitations-banner" class="notice banner" hidden>', html)
    check_page_habits(alice, html, "/static/js/notebooks.js")
    script = alice.get("/static/js/notebooks.js").text
    assert "/api/me/invitations" in script and "/account#invitations" in script


def test_the_api_answers_what_the_pages_read(teacher, alice, bob, course):
    # Adding an account the teacher does not manage: 202 with a message, not a member.
    response = teacher.put(f"/api/groups/{course}/members/alice", json={"manager": False})
    assert response.status_code == 202, response.text
    sent = response.json()
    assert sent["code"] == "invited" and sent["user"] == "alice" and sent["manager"] is False
    assert "invited" in sent["message"]
    names = {m["name"] for m in teacher.ok("GET", f"/api/groups/{course}/members")}
    assert "alice" not in names
    # What the account page and the banner show.
    (invitation,) = alice.ok("GET", "/api/me/invitations")
    assert invitation["group"] == course
    assert invitation["display_name"] == "Invited Course"
    assert invitation["invited_by"] == "teacher"
    assert invitation["manager"] is False and invitation["created_at"]
    # An import lists invited accounts apart from created and added ones.
    result = teacher.ok(
        "POST", f"/api/groups/{course}/import", json={"csv": "username\ninv-s1\nbob\n"}
    )
    assert [c["name"] for c in result["created"]] == ["inv-s1"]
    assert result["enrolled"] == ["inv-s1"] and result["invited"] == ["bob"]
    # The group's managers list pending invitations; withdrawing has its own route.
    assert "bob" in [i["user"] for i in teacher.ok("GET", f"/api/groups/{course}/invitations")]
    teacher.ok("DELETE", f"/api/groups/{course}/invitations/bob")
    assert bob.ok("GET", "/api/me/invitations") == []
    assert teacher.delete(f"/api/groups/{course}/invitations/bob").status_code == 404
    accepted = alice.ok("POST", f"/api/me/invitations/{course}")
    assert course in accepted["message"]
    assert alice.ok("GET", "/api/me/invitations") == []
    names = {m["name"] for m in teacher.ok("GET", f"/api/groups/{course}/members")}
    assert {"alice", "inv-s1"} <= names


# -- in a real browser -----------------------------------------------------------------------

CHROMIUM = (
    os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
)


class Browser:
    """Headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self) -> None:
        import websocket

        self.profile = tempfile.mkdtemp(prefix="cgu-inv-chromium-")
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not start")
            time.sleep(0.1)  # Chromium starting: it writes the port file when ready
        port = int(port_file.read_text().split()[0])
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.ids = itertools.count(1)
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.errors: list[str] = []

    def send(self, method: str, **params):
        sent = next(self.ids)
        self.socket.send(json.dumps({"id": sent, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("method") == "Runtime.exceptionThrown":
                self.errors.append(json.dumps(message["params"]["exceptionDetails"])[:500])
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str):
        result = self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(f"Boolean({expression})"):
                return
            time.sleep(0.15)  # the page's own scripts run in Chromium: ask it again
        page = self.evaluate("document.querySelector('main')?.innerText ?? ''")
        raise AssertionError(
            f"waited in vain for {expression}; errors {self.errors}; page:\n{page}"
        )

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")
        # Decisions the tests make are never asked in a modal the protocol would have to answer.
        self.evaluate("window.confirm = () => true")

    def login(self, base: str, name: str, password: str = PASSWORD) -> None:
        self.send("Network.clearBrowserCookies")
        self.goto(f"{base}/login")
        self.evaluate(
            f"""(() => {{
              const form = document.querySelector('form[action="/login"]') ?? document.forms[0];
              form.elements.name.value = {json.dumps(name)};
              form.elements.password.value = {json.dumps(password)};
              form.submit();
            }})()"""
        )
        self.wait_for("location.pathname === '/notebooks' && document.readyState === 'complete'")

    def click(self, selector: str) -> None:
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")

    def text(self, selector: str) -> str:
        return self.evaluate(f"document.querySelector({json.dumps(selector)})?.innerText ?? ''")

    def close(self) -> None:
        if getattr(self, "socket", None):
            self.socket.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM:
        pytest.skip("Chromium is not installed (set CHROMIUM to its path)")
    session = Browser()
    yield session
    session.close()


def visible(selector: str) -> str:
    """A script expression: the element is shown."""
    found = f"document.querySelector({json.dumps(selector)})"
    return f"(e => Boolean(e && !e.hidden && e.offsetParent !== null))({found})"


def exists(selector: str) -> str:
    return f"document.querySelector({json.dumps(selector)}) !== null"


def count(selector: str) -> str:
    return f"document.querySelectorAll({json.dumps(selector)}).length"


@pytest.mark.integration
def test_invitations_in_the_browser(browser, site, teacher, admin, bob, course):
    base = site.serve()  # the same app, over HTTP on loopback for Chromium
    teacher.ok("POST", "/api/groups", 201, json={"name": "inv-web", "display_name": "Invited Web"})
    admin.ok("POST", "/api/users", 201, json={"name": "inv-carol", "password": PASSWORD})
    page = browser
    bob_row = '#invitations tr[data-invitation="bob"]'

    # The teacher adds bob (in no group of theirs): the page says he was invited, not added.
    page.login(base, "teacher")
    page.goto(f"{base}/admin/groups/inv-web")
    page.wait_for(
        "document.getElementById('invitations').innerText.includes('No pending invitation')"
    )
    page.evaluate(
        """(() => {
          const form = document.getElementById('member-form');
          form.elements.user.value = 'bob';
          form.requestSubmit();
        })()"""
    )
    page.wait_for(visible("#member-notice"))
    assert "invited" in page.text("#member-notice")
    page.wait_for(exists(f"{bob_row} button"))
    assert "bob" not in page.text("#members")

    # An import: a new account joins, an existing one (inv-carol) is listed as invited.
    page.evaluate(
        """(() => {
          document.getElementById('csv-text').value = 'username\\ninv-w1\\ninv-carol\\n';
          document.getElementById('import-form').requestSubmit();
        })()"""
    )
    page.wait_for(visible("#import-result"))
    assert page.text("#import-invited") == "inv-carol"
    assert "inv-w1" in page.text("#import-created") and "inv-w1" in page.text("#import-enrolled")
    assert "1 invited" in page.text("#import-summary")
    page.wait_for(exists('#invitations tr[data-invitation="inv-carol"]'))

    # The list comes from the platform (it outlives the tab); Withdraw takes bob's back.
    page.goto(f"{base}/admin/groups/inv-web")
    page.wait_for(exists(f"{bob_row} button"))
    page.click(f"{bob_row} button")
    page.wait_for(f"{visible('#status')} && !({exists(bob_row)})")
    assert "was withdrawn" in page.text("#status")
    assert bob.ok("GET", "/api/me/invitations") == []

    # A second invitation for inv-carol, to decline.
    invited = teacher.put(f"/api/groups/{course}/members/inv-carol", json={"manager": False})
    assert invited.status_code == 202, invited.text

    # inv-carol sees the banner, then declines one and accepts the other on her account page.
    page.login(base, "inv-carol")
    page.wait_for(visible("#invitations-banner"))
    banner = page.text("#invitations-banner")
    assert "2 course invitations" in banner and "Invited Web" in banner
    link = page.evaluate("document.querySelector('#invitations-banner a').getAttribute('href')")
    assert link == "/account#invitations"
    page.goto(f"{base}{link}")
    rows = "#invitation-rows tr[data-invitation]"
    page.wait_for(f"{count(rows)} === 2")
    row = page.text('#invitation-rows tr[data-invitation="inv-web"]')
    assert "Invited Web" in row and "teacher" in row
    page.click(f'#invitation-rows tr[data-invitation="{course}"] button.danger')
    page.wait_for(f"{count(rows)} === 1")
    page.click('#invitation-rows tr[data-invitation="inv-web"] button.primary')
    page.wait_for(f"{count(rows)} === 0 && {visible('#status')}")
    assert "No pending invitation" in page.text("#invitation-rows")
    assert "joined" in page.text("#status")
    members = {m["name"] for m in teacher.ok("GET", "/api/groups/inv-web/members")}
    assert "inv-carol" in members and "bob" not in members
    course_members = teacher.ok("GET", f"/api/groups/{course}/members")
    assert "inv-carol" not in {m["name"] for m in course_members}
    # No banner once everything is answered.
    page.goto(f"{base}/notebooks")
    page.wait_for("document.getElementById('invitations-banner').dataset.state === 'none'")
    assert page.evaluate(visible("#invitations-banner")) is False
    assert page.errors == []
