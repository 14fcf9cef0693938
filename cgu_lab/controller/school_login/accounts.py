"""From who a provider says a person is to a platform account and a session: the part
of the school login that OpenID Connect (oidc_login.py) and LDAP (ldap_login.py) share.

The first login creates the account (a platform user with no password, its Unix
account name checked as any new account's), and every later login updates it:
name, e-mail, role and the courses the administrator's rules give. The account is
tied to the provider's stable subject (OpenID `sub`, LDAP DN), never to a name or
an address the school may give to someone else later. Places a teacher pre-enrolled
by e-mail are taken at the first login, by a verified address only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.local_accounts import UnixClash, check_unix_names
from ...core.directory import decide, user_name_for
from ...core.errors import Invalid, NotFound
from ...core.roles import MANAGER_ROLES, Role
from ...store.db import Database
from ...store.directory_models import DirectoryAccount
from ...store.models import Group, Membership, Session, User
from .. import audit
from ..accounts.security import new_token, token_hash
from ..clock import Clock
from . import pre_enrolments
from .refusals import Refused
from .rules import role_rules
from .schemas import LdapProvider, OidcProvider
from .sealing import Sealer

log = logging.getLogger("cgu_lab.school_login")


@dataclass
class Person:
    """What a provider or directory vouched for."""

    provider: str
    subject: str
    preferred: str
    email: str
    email_verified: bool
    display_name: str
    attributes: dict[str, list[str]] = field(default_factory=dict)
    refresh_token: str = ""


class SchoolAccounts:
    def __init__(
        self,
        db: Database,
        auth,
        clock: Clock,
        providers: Mapping[str, OidcProvider | LdapProvider],
        sealer: Sealer,
        session_lifetime: timedelta,
        unix_clash: UnixClash | None = None,
    ) -> None:
        """`auth`: the Authenticator, whose caches of a user are dropped once a login
        changed their role or courses; `sealer` seals the refresh token an OpenID login
        leaves for the periodic check; `clock`: the platform's, for logins and the
        sessions' ends."""
        self.db = db
        self.auth = auth
        self.clock = clock
        self.providers = providers
        self.sealer = sealer
        self.session_lifetime = session_lifetime
        self.unix_clash = unix_clash

    def provider(self, provider: str) -> OidcProvider | LdapProvider:
        found = self.providers.get(provider)
        if found is None:
            raise NotFound(f"there is no school login '{provider}'; use the login page's buttons")
        return found

    async def refused(self, provider: str, code: str, who: str, address: str) -> None:
        """Audit a login the provider's answer or its checks refused, in its own
        transaction (the refusal itself is raised by the caller)."""
        async with self.db.session() as session:
            audit.record(
                session, f"school:{provider}", "auth.login_refused", who, code=code, address=address
            )

    async def sign_in(self, person: Person, address: str) -> str:
        """Create or update the account the person's directory identity is tied to and
        open a session for it; returns the session's token."""
        provider = self.provider(person.provider)
        async with self.db.session() as session:
            decision = decide(
                await role_rules(session), provider.id, person.attributes, provider.fallback_role
            )
            if decision is None:
                audit.record(
                    session,
                    f"school:{provider.id}",
                    "auth.login_refused",
                    person.subject[:200],
                    code="not_mapped",
                    address=address,
                )
                await session.commit()
                raise Refused(
                    f"your {provider.name} account has no place in cgu-lab yet (no rule gives "
                    "it a role); ask your teacher or an administrator",
                    "not_mapped",
                    403,
                )
            link = await session.scalar(
                select(DirectoryAccount).where(
                    DirectoryAccount.provider == provider.id,
                    DirectoryAccount.subject == person.subject,
                )
            )
            if link is None:
                user, link = await self._create(session, person, decision.role)
            else:
                user = await session.get(User, link.user_id)
                if user is None or not user.active:
                    raise Refused(
                        "your cgu-lab account is deactivated; ask an administrator",
                        "account_inactive",
                        403,
                    )
                self._update(session, provider.id, user, person, decision.role)
            await self._courses(session, provider.id, user, link, decision.courses)
            if person.refresh_token:
                link.refresh_token = self.sealer.seal(person.refresh_token)
            link.last_checked = self.clock.now()
            token = new_token()
            session.add(
                Session(
                    token_hash=token_hash(token),
                    user_id=user.id,
                    csrf=new_token(),
                    expires_at=self.clock.now() + self.session_lifetime,
                )
            )
            user.last_login = user.last_activity = self.clock.now()
            audit.record(
                session,
                user.name,
                "auth.login",
                f"user:{user.name}",
                address=address,
                via=f"school:{provider.id}",
            )
            user_id = user.id
        self.auth.forget_user(user_id)
        return token

    async def _create(
        self, session: AsyncSession, person: Person, role: Role
    ) -> tuple[User, DirectoryAccount]:
        provider = self.provider(person.provider)
        try:
            name = user_name_for(person.preferred, person.email)
        except Invalid as invalid:
            raise Refused(invalid.message, "name_unusable", 409) from None
        if await session.scalar(select(User.id).where(User.name == name)):
            raise Refused(
                f"a cgu-lab account named '{name}' exists already and is not tied to your "
                f"{provider.name} account; ask an administrator to sort it out",
                "name_taken",
                409,
            )
        await check_unix_names(session, [name], self.unix_clash)
        user = User(
            name=name,
            display_name=person.display_name.strip()[:200] or name,
            email=person.email[:320],
            role=role.value,
            password_hash=None,  # never a local password, unless an administrator gives one
            must_change_password=False,
            directory=provider.id,
        )
        session.add(user)
        await session.flush()
        link = DirectoryAccount(
            user_id=user.id, provider=provider.id, subject=person.subject, courses=[]
        )
        session.add(link)
        audit.record(
            session,
            f"school:{provider.id}",
            "user.created",
            f"user:{name}",
            role=role.value,
            directory=provider.id,
        )
        if person.email and person.email_verified:
            await pre_enrolments.take(session, user, person.email)
        return user, link

    def _update(
        self, session: AsyncSession, provider: str, user: User, person: Person, role: Role
    ) -> None:
        changes: dict[str, list] = {}
        display = person.display_name.strip()[:200]
        if display and display != user.display_name:
            changes["display_name"] = [user.display_name, display]
            user.display_name = display
        if person.email and person.email_verified and person.email != user.email:
            changes["email"] = [user.email, person.email]
            user.email = person.email[:320]
        if role.value != user.role:
            changes["role"] = [user.role, role.value]
            user.role = role.value
        if changes:
            audit.record(
                session, f"school:{provider}", "user.updated", f"user:{user.name}", changes=changes
            )

    async def _courses(
        self,
        session: AsyncSession,
        provider: str,
        user: User,
        link: DirectoryAccount,
        wanted: dict[str, bool],
    ) -> None:
        """Join the courses the rules name; leave those the directory gave before and no
        longer names (a course someone added by hand stays). A manager's flag follows the
        role: a user the directory demotes to student manages nothing any more."""
        if Role(user.role) not in MANAGER_ROLES:
            await session.execute(
                update(Membership)
                .where(Membership.user_id == user.id, Membership.manager)
                .values(manager=False)
            )
        groups = {
            g.name: g
            for g in (
                await session.scalars(
                    select(Group).where(Group.name.in_(list(wanted) + list(link.courses or [])))
                )
            ).all()
        }
        kept: list[str] = []
        for name, manages in wanted.items():
            group = groups.get(name)
            if group is None:
                log.warning("a school rule names course %r, which does not exist", name)
                continue
            kept.append(name)
            membership = await session.get(Membership, (group.id, user.id))
            if membership is None:
                session.add(Membership(group_id=group.id, user_id=user.id, manager=manages))
            elif membership.manager != manages:
                membership.manager = manages
            else:
                continue
            audit.record(
                session,
                f"school:{provider}",
                "group.member_added" if membership is None else "group.member_changed",
                f"group:{name}",
                user=user.name,
                manager=manages,
            )
        for name in link.courses or []:
            group = groups.get(name)
            if name in kept or group is None:
                continue
            membership = await session.get(Membership, (group.id, user.id))
            if membership is not None:
                await session.delete(membership)
                audit.record(
                    session,
                    f"school:{provider}",
                    "group.member_removed",
                    f"group:{name}",
                    user=user.name,
                )
        link.courses = kept
