"""Real directory servers for the school-login tests, on loopback, in temp folders.

`OidcServer` runs oidc_provider.mjs (the npm package `oidc-provider`, installed here
with `npm ci` on first use) and drives its test controls; `Slapd` runs Debian's slapd
with a TLS certificate made for 127.0.0.1, seeded with an OU of students, an OU of
staff and groups (staff-ai, ml-101). Both are started by fixtures and stopped after.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).parent
BASE_DN = "dc=school,dc=test"
ADMIN_DN = f"cn=admin,{BASE_DN}"
ADMIN_PASSWORD = "directory-admin-pass"
SLAPD = shutil.which("slapd") or "/usr/sbin/slapd"


def ensure_provider_installed() -> None:
    """`npm ci` in tests/directory once (its node_modules is ignored by git)."""
    if (HERE / "node_modules" / "oidc-provider").is_dir():
        return
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=HERE, check=True, timeout=300
    )


def _wait_line(process: subprocess.Popen, word: str, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if word in line:
            return line
        if process.poll() is not None:
            raise RuntimeError(f"the server ended: {process.stdout.read()[-2000:]}")
    raise TimeoutError(f"no {word!r} within {seconds} s")


class OidcServer:
    def __init__(self, port: int, clients: list[dict], users: dict[str, dict]) -> None:
        ensure_provider_installed()
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}"
        config = json.dumps({"port": port, "clients": clients, "users": users})
        self.process = subprocess.Popen(
            ["node", str(HERE / "oidc_provider.mjs")],
            env={**os.environ, "OIDC_TEST_CONFIG": config, "NODE_NO_WARNINGS": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        _wait_line(self.process, "ready", 30)

    def control(self, what: str, **body) -> dict:
        reply = httpx.post(f"{self.issuer}/_test/{what}", json=body, timeout=10)
        reply.raise_for_status()
        return reply.json()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _ldif(password_hash: str) -> str:
    people = [
        ("students", "anna", "Anna Berg", "anna@school.test"),
        ("students", "olle", "Olle Ek", "olle@school.test"),
        ("students", "disa", "Disa Lind", "disa@school.test"),
        ("staff", "tove", "Tove Staff", "tove@school.test"),
    ]
    parts = [
        f"dn: {BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\n"
        "o: Test school\ndc: school\n",
        f"dn: ou=students,{BASE_DN}\nobjectClass: organizationalUnit\nou: students\n",
        f"dn: ou=staff,{BASE_DN}\nobjectClass: organizationalUnit\nou: staff\n",
        f"dn: ou=groups,{BASE_DN}\nobjectClass: organizationalUnit\nou: groups\n",
    ]
    for ou, uid, name, mail in people:
        parts.append(
            f"dn: uid={uid},ou={ou},{BASE_DN}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
            f"cn: {name}\nsn: {name.split()[-1]}\nmail: {mail}\nuserPassword: {password_hash}\n"
        )
    parts.append(
        f"dn: cn=staff-ai,ou=groups,{BASE_DN}\nobjectClass: groupOfNames\ncn: staff-ai\n"
        f"member: uid=tove,ou=staff,{BASE_DN}\n"
    )
    parts.append(
        f"dn: cn=ml-101,ou=groups,{BASE_DN}\nobjectClass: groupOfNames\ncn: ml-101\n"
        f"member: uid=anna,ou=students,{BASE_DN}\nmember: uid=olle,ou=students,{BASE_DN}\n"
    )
    return "\n".join(parts)


class Slapd:
    """slapd on 127.0.0.1:<port> with StartTLS; every user's password is `password`."""

    def __init__(self, port: int, password: str) -> None:
        self.port = port
        self.url = f"ldap://127.0.0.1:{port}"
        self.dir = Path(tempfile.mkdtemp(prefix="cgu-slapd-"))
        self.ca = self.dir / "cert.pem"
        subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", str(self.dir / "key.pem"), "-out", str(self.ca),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
        (self.dir / "db").mkdir()
        conf = self.dir / "slapd.conf"
        conf.write_text(
            "\n".join(
                [
                    "include /etc/ldap/schema/core.schema",
                    "include /etc/ldap/schema/cosine.schema",
                    "include /etc/ldap/schema/inetorgperson.schema",
                    "modulepath /usr/lib/ldap",
                    "moduleload back_mdb",
                    f"pidfile {self.dir}/slapd.pid",
                    f"TLSCertificateFile {self.ca}",
                    f"TLSCertificateKeyFile {self.dir}/key.pem",
                    "database mdb",
                    f'suffix "{BASE_DN}"',
                    f'rootdn "{ADMIN_DN}"',
                    f"rootpw {ADMIN_PASSWORD}",
                    f"directory {self.dir}/db",
                    "access to attrs=userPassword by self write by anonymous auth by * none",
                    "access to * by users read by * none",
                    "",
                ]
            )
        )
        hashed = subprocess.run(
            ["slappasswd", "-s", password], check=True, capture_output=True, text=True
        ).stdout.strip()
        subprocess.run(
            ["slapadd", "-f", str(conf)], input=_ldif(hashed), text=True, check=True,
            capture_output=True,
        )  # fmt: skip
        self.process = subprocess.Popen(
            [SLAPD, "-f", str(conf), "-h", f"{self.url}/", "-d", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            probe = subprocess.run(
                ["ldapwhoami", "-x", "-H", self.url, "-D", ADMIN_DN, "-w", ADMIN_PASSWORD],
                capture_output=True,
            )
            if probe.returncode == 0:
                return
            time.sleep(0.2)
        raise TimeoutError("slapd did not answer")

    def modify(self, ldif: str) -> None:
        subprocess.run(
            ["ldapmodify", "-x", "-H", self.url, "-D", ADMIN_DN, "-w", ADMIN_PASSWORD],
            input=ldif, text=True, check=True, capture_output=True,
        )  # fmt: skip

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
