"""School login: the one object the platform, the router and the pages talk to.

It loads the configured providers and puts the feature's rooms together, each handed
what it needs and none holding this object: the account matching both kinds of login
share (accounts.py), the OpenID Connect login (oidc_login.py), the LDAP login
(ldap_login.py), the administrator's rules (rules.py) and the teachers' pre-enrolments
(pre_enrolments.py). What spans both kinds of provider stays here: the login page's
choices and the background check.

That check asks each provider, now and then, whether the users who hold a session
still exist there (LDAP: the entry, with the service account; OpenID: the refresh
token the provider gave); a user the directory disabled loses their sessions and API
tokens at that check.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from sqlalchemy import select, update

from ...backends.local_accounts import UnixClash
from ...core.roles import Principal
from ...store.db import Database
from ...store.directory_models import DirectoryAccount, DirectoryRule
from ...store.models import Session, User
from .. import audit
from ..clock import Clock
from .accounts import SchoolAccounts
from .ldap_login import LdapLogins
from .oidc_login import OidcLogins, redirect_uri
from .pre_enrolments import PreEnrolments
from .rules import Rules
from .schemas import (
    LdapProvider,
    LoginChoices,
    OidcProvider,
    PreEnrolOut,
    RuleIn,
    SchoolLoginChoice,
    load_providers,
)
from .sealing import Sealer

log = logging.getLogger("cgu_lab.school_login")


class SchoolLogin:
    def __init__(
        self,
        db: Database,
        auth,
        settings,
        clock: Clock,
        unix_clash: UnixClash | None = None,
    ) -> None:
        """`auth`: the Authenticator (its caches are dropped when a role or course changes
        and its `end_sessions` ends a disabled user's sessions); `clock`: the platform's,
        for logins, sessions' ends and the directory checks, and the pending logins' and
        providers' caches."""
        self.db = db
        self.clock = clock
        self.auth = auth
        self.settings = settings
        self.providers: dict[str, OidcProvider | LdapProvider] = {
            p.id: p
            for p in load_providers(
                settings.school_providers.get_secret_value(), settings.school_providers_file
            )
        }
        self.sealer = Sealer(settings.secrets_dir)
        self.accounts = SchoolAccounts(
            db,
            auth,
            clock,
            self.providers,
            self.sealer,
            timedelta(hours=settings.session_hours),
            unix_clash,
        )
        self.oidc = OidcLogins(
            [p for p in self.providers.values() if isinstance(p, OidcProvider)],
            settings.base_url,
            clock,
            self.accounts,
            self.sealer,
        )
        self.ldap = LdapLogins(
            [p for p in self.providers.values() if isinstance(p, LdapProvider)], self.accounts
        )
        self.rules = Rules(db, self.accounts.provider)
        self.pre_enrolment = PreEnrolments(db)

    def redirect_uri(self, provider: str) -> str:
        return redirect_uri(self.settings.base_url, provider)

    def choices(self) -> list[SchoolLoginChoice]:
        return [SchoolLoginChoice(p.id, p.name, p.kind) for p in self.providers.values()]

    # -- the logins (pages.py) ------------------------------------------------------------

    async def begin(self, provider: str, next: str) -> tuple[str, str]:
        return await self.oidc.begin(provider, next)

    async def finish(
        self, provider: str, state: str, code: str, error: str, browser: str, address: str
    ) -> tuple[str, str]:
        return await self.oidc.finish(provider, state, code, error, browser, address)

    async def password_login(self, provider: str, login: str, password: str, address: str) -> str:
        return await self.ldap.password_login(provider, login, password, address)

    # -- the System page's rules and the teachers' pre-enrolments (router.py) -------------

    async def list_rules(self, actor: Principal) -> list[DirectoryRule]:
        return await self.rules.read(actor)

    async def add_rule(self, actor: Principal, rule: RuleIn) -> DirectoryRule:
        return await self.rules.add(actor, rule)

    async def delete_rule(self, actor: Principal, rule_id: int) -> None:
        await self.rules.delete(actor, rule_id)

    async def pre_enrol(self, actor: Principal, group_name: str, text: str) -> PreEnrolOut:
        return await self.pre_enrolment.add(actor, group_name, text)

    async def pre_enrolments(self, actor: Principal, group_name: str) -> list[str]:
        return await self.pre_enrolment.waiting(actor, group_name)

    # -- the periodic check and log-out ---------------------------------------------------

    async def check_once(self) -> list[str]:
        """Ask the directory about every directory user who holds a session; end the
        sessions of those it no longer knows or has disabled. Returns their names."""
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(DirectoryAccount, User.name)
                    .join(User, User.id == DirectoryAccount.user_id)
                    .where(
                        DirectoryAccount.user_id.in_(
                            select(Session.user_id).where(Session.expires_at > self.clock.now())
                        )
                    )
                )
            ).all()
            links = [
                (link.user_id, link.provider, link.subject, link.refresh_token, name)
                for link, name in rows
            ]
        ended: list[str] = []
        for user_id, provider, subject, sealed, name in links:
            known, renewed = await self._still_known(provider, subject, sealed)
            async with self.db.session() as session:
                values: dict = {"last_checked": self.clock.now()}
                if renewed is not None:
                    values["refresh_token"] = self.sealer.seal(renewed) if renewed else ""
                await session.execute(
                    update(DirectoryAccount)
                    .where(DirectoryAccount.user_id == user_id)
                    .values(**values)
                )
                if known is False:
                    audit.record(
                        session,
                        f"school:{provider}",
                        "auth.sessions_ended",
                        f"user:{name}",
                        reason="disabled or removed in the directory",
                    )
            if known is False:
                await self.auth.end_sessions(user_id)
                ended.append(name)
        return ended

    async def _still_known(
        self, provider: str, subject: str, sealed: str
    ) -> tuple[bool | None, str | None]:
        if provider in self.ldap:
            return await self.ldap.still_enabled(provider, subject), None
        return await self.oidc.still_known(provider, sealed)

    async def run(self) -> None:
        if not self.providers:
            return
        while True:
            await asyncio.sleep(self.settings.directory_check_interval)
            try:
                ended = await self.check_once()
                if ended:
                    log.info("directory check ended the sessions of %s", ", ".join(ended))
            except Exception:  # the next round tries again
                log.exception("the directory check failed")

    async def after_logout(self, user_id: int) -> str:
        """Where a log-out lands: the login page, offering the provider's own log-out to
        a user who came through an OpenID provider that has one."""
        async with self.db.session() as session:
            provider = await session.scalar(select(User.directory).where(User.id == user_id))
        if provider and provider in self.oidc:
            return f"/login?signed_out={provider}"
        return "/login"

    async def login_context(self, signed_out: str = "") -> LoginChoices:
        """What the login page shows of the school logins: a button per OpenID provider,
        a form per LDAP directory, and after a log-out the provider's end-session link."""
        end_session = await self.oidc.end_session(signed_out, self.settings.base_url + "/login")
        return LoginChoices(school_logins=self.choices(), end_session=end_session)
