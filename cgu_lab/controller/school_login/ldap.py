"""An LDAP or Active Directory login: the person's own bind, over TLS, never anonymous.

ldap3 does the protocol; it blocks, so each login runs in a worker thread. Rules kept
here: a password must be given (an LDAP simple bind with an empty password is an
*unauthenticated* bind that many servers accept as anonymous, the classic way into a
directory login); the connection is LDAPS or upgraded with StartTLS before any
credential is sent, and the server's certificate is checked; the typed name is refused
when it carries filter or DN syntax and escaped wherever it is used
(core/directory.py); exactly one entry must match.
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass

from ldap3 import BASE, NONE, SIMPLE, SUBTREE, Connection, Server, Tls
from ldap3.core.exceptions import LDAPException

from ...core.directory import (
    check_login_name,
    escape_dn_value,
    escape_filter_value,
    fill_filter,
    group_names,
)
from .refusals import Refused
from .schemas import LdapProvider

log = logging.getLogger("cgu_lab.school_login")

WRONG = "wrong school user name or password"


@dataclass(frozen=True)
class DirectoryEntry:
    dn: str
    login: str
    email: str
    display_name: str
    groups: list[str]


def _first(attributes: dict, name: str) -> str:
    value = attributes.get(name)
    if isinstance(value, list):
        value = value[0] if value else ""
    return str(value or "")


def _all(attributes: dict, name: str) -> list[str]:
    value = attributes.get(name) or []
    return [str(v) for v in (value if isinstance(value, list) else [value])]


class LdapDirectory:
    def __init__(self, provider: LdapProvider) -> None:
        self.provider = provider
        tls = Tls(
            validate=ssl.CERT_REQUIRED,
            version=ssl.PROTOCOL_TLS_CLIENT,
            ca_certs_file=str(provider.ca_file) if provider.ca_file else None,
        )
        self.server = Server(
            provider.url,
            use_ssl=provider.url.startswith("ldaps://"),
            tls=tls,
            get_info=NONE,
            connect_timeout=provider.timeout,
        )

    def _unreachable(self, error: Exception) -> Refused:
        log.warning("directory %s: %s", self.provider.id, type(error).__name__)
        return Refused(
            f"{self.provider.name} does not answer right now; try again in a minute",
            "directory_unreachable",
            503,
        )

    def _bind(self, dn: str, password: str) -> Connection | None:
        """A connection bound as `dn` over TLS; None when the directory refuses the
        credentials. Never called with an empty password (an anonymous bind)."""
        if not dn or not password:
            return None
        connection = Connection(
            self.server,
            user=dn,
            password=password,
            authentication=SIMPLE,
            read_only=True,
            receive_timeout=self.provider.timeout,
            raise_exceptions=False,
        )
        try:
            connection.open()
            if not self.provider.url.startswith("ldaps://") and not connection.start_tls():
                raise LDAPException("StartTLS refused")
            if not connection.bind():
                connection.unbind()
                return None
        except (LDAPException, OSError, ssl.SSLError) as error:
            raise self._unreachable(error) from None
        return connection

    def _service(self) -> Connection:
        bound = self._bind(self.provider.bind_dn, self.provider.bind_password.get_secret_value())
        if bound is None:
            log.error("directory %s: the service account's bind was refused", self.provider.id)
            raise Refused(
                f"cgu-lab cannot search {self.provider.name} (its service account was "
                "refused); tell an administrator",
                "directory_misconfigured",
                503,
            )
        return bound

    def _attributes(self) -> list[str]:
        p = self.provider
        return [p.username_attribute, p.email_attribute, p.display_name_attribute, "memberOf"]

    @staticmethod
    def _entries(connection: Connection) -> list[tuple[str, dict]]:
        return [
            (r["dn"], dict(r.get("attributes") or {}))
            for r in connection.response or []
            if r.get("type") == "searchResEntry"
        ]

    def _find(self, connection: Connection, login: str) -> list[tuple[str, dict]]:
        connection.search(
            self.provider.search_base,
            fill_filter(self.provider.search_filter, login),
            search_scope=SUBTREE,
            attributes=self._attributes(),
            size_limit=2,
        )
        return self._entries(connection)

    def _disabled(self, connection: Connection, dn: str) -> bool:
        if not self.provider.disabled_filter:
            return False
        connection.search(dn, self.provider.disabled_filter, search_scope=BASE, attributes=[])
        return bool(self._entries(connection))

    def _groups(self, connection: Connection, dn: str, login: str, attributes: dict) -> list[str]:
        groups = group_names(_all(attributes, "memberOf"))
        if self.provider.group_base:
            query = self.provider.group_filter.replace("{dn}", escape_filter_value(dn))
            query = query.replace("{login}", escape_filter_value(login))
            connection.search(self.provider.group_base, query, SUBTREE, attributes=["cn"])
            for group_dn, found in self._entries(connection):
                groups += [group_dn, *_all(found, "cn")]
        return groups

    def authenticate(self, login: str, password: str) -> DirectoryEntry:
        """Who `login` is, once their own bind succeeded; Refused otherwise."""
        login = check_login_name(login)
        if not password:
            raise Refused("type your school password", "password_missing", 400)
        service = self._service() if self.provider.bind_dn else None
        try:
            if service is not None:
                found = self._find(service, login)
                if len(found) != 1:
                    raise Refused(WRONG, "wrong_credentials")
                dn = found[0][0]
            else:
                dn = self.provider.user_dn_template.replace("{login}", escape_dn_value(login))
            user = self._bind(dn, password)
            if user is None:
                raise Refused(WRONG, "wrong_credentials")
            try:
                reader = service or user
                found = [
                    pair for pair in self._find(reader, login) if pair[0].lower() == dn.lower()
                ]
                if len(found) != 1:
                    raise Refused(WRONG, "wrong_credentials")
                attributes = found[0][1]
                if self._disabled(reader, dn):
                    raise Refused(
                        f"your {self.provider.name} account is disabled; ask your school's "
                        "IT office",
                        "account_disabled",
                        403,
                    )
                groups = self._groups(reader, dn, login, attributes)
            finally:
                user.unbind()
        except LDAPException as error:
            raise self._unreachable(error) from None
        finally:
            if service is not None:
                service.unbind()
        return DirectoryEntry(
            dn=dn,
            login=_first(attributes, self.provider.username_attribute) or login,
            email=_first(attributes, self.provider.email_attribute),
            display_name=_first(attributes, self.provider.display_name_attribute),
            groups=groups,
        )

    def still_enabled(self, dn: str) -> bool | None:
        """Whether the entry still exists and is not disabled; None when this cannot be
        asked (no service account, or the directory does not answer)."""
        if not self.provider.bind_dn:
            return None
        try:
            service = self._service()
        except Refused:
            return None
        try:
            service.search(dn, "(objectClass=*)", search_scope=BASE, attributes=[])
            if not self._entries(service):
                return False
            return not self._disabled(service, dn)
        except LDAPException:
            return None
        finally:
            service.unbind()
