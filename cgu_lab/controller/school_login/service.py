"""School login: from who the directory says a person is to a platform session.

The first login creates the account (a platform user with no password, its Unix
account name checked as any new account's), and every later login updates it:
name, e-mail, role and the courses the administrator's rules give. The account is
tied to the provider's stable subject (OpenID `sub`, LDAP DN), never to a name or
an address the school may give to someone else later. Places a teacher pre-enrolled
by e-mail are taken at the first login, by a verified address only.

A background check asks each provider, now and then, whether the users who hold a
session still exist there (LDAP: the entry, with the service account; OpenID: the
refresh token the provider gave); a user the directory disabled loses their sessions
and API tokens at that check.
"""

from __future__ import annotations

import asyncio
import csv
import hmac
import io
import logging
from dataclasses import dataclass, field
from datetime import timedelta

from cachetools import TTLCache
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.local_accounts import UnixClash, check_unix_names
from ...core import roles
from ...core.directory import GROUPS, RoleRule, claim_values, decide, user_name_for
from ...core.errors import Invalid, NotFound
from ...core.names import EMAIL
from ...core.roles import MANAGER_ROLES, Principal, Role
from ...store.db import Database
from ...store.directory_models import DirectoryAccount, DirectoryRule, PreEnrolment
from ...store.models import Group, Membership, Session, User
from .. import audit
from ..accounts.security import new_token, token_hash
from ..clock import Clock
from .ldap import DirectoryEntry, LdapDirectory
from .oidc import Authorization, OidcClient
from .refusals import Refused
from .schemas import LdapProvider, OidcProvider, PreEnrolOut, RuleIn, load_providers
from .sealing import Sealer

log = logging.getLogger("cgu_lab.school_login")

PENDING_SECONDS = 600
MAX_PENDING = 10_000
MAX_PRE_ENROL = 5000


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


@dataclass(frozen=True)
class Pending:
    provider: str
    authorization: Authorization
    browser: str  # the hash of the browser's binding cookie
    next: str


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
        self.unix_clash = unix_clash
        self.providers: dict[str, OidcProvider | LdapProvider] = {
            p.id: p
            for p in load_providers(
                settings.school_providers.get_secret_value(), settings.school_providers_file
            )
        }
        self.oidc = {
            p.id: OidcClient(p, self.redirect_uri(p.id), clock)
            for p in self.providers.values()
            if isinstance(p, OidcProvider)
        }
        self.ldap = {
            p.id: LdapDirectory(p) for p in self.providers.values() if isinstance(p, LdapProvider)
        }
        self._pending: TTLCache[str, Pending] = TTLCache(
            MAX_PENDING, PENDING_SECONDS, timer=clock.monotonic
        )
        self.sealer = Sealer(settings.secrets_dir)
        self.session_lifetime = timedelta(hours=settings.session_hours)

    def redirect_uri(self, provider: str) -> str:
        """Exactly what the provider must have registered: from the configured public URL,
        never from the request's Host header (which a client chooses)."""
        return f"{self.settings.base_url}/login/school/{provider}/callback"

    def provider(self, provider: str) -> OidcProvider | LdapProvider:
        found = self.providers.get(provider)
        if found is None:
            raise NotFound(f"there is no school login '{provider}'; use the login page's buttons")
        return found

    def choices(self) -> list[dict]:
        return [{"id": p.id, "name": p.name, "kind": p.kind} for p in self.providers.values()]

    # -- OpenID Connect ------------------------------------------------------------

    async def begin(self, provider: str, next: str) -> tuple[str, str]:
        """The provider's login URL and the secret the browser keeps (a cookie) so that
        only the browser that started a login can finish it."""
        client = self.oidc.get(provider)
        if client is None:
            self.provider(provider)
            raise Invalid("this school login takes a user name and password on cgu-lab's page")
        authorization = await client.authorization()
        browser = new_token()
        self._pending[authorization.state] = Pending(
            provider, authorization, token_hash(browser), next
        )
        return authorization.url, browser

    async def finish(
        self,
        provider: str,
        state: str,
        code: str,
        error: str,
        browser: str,
        address: str,
    ) -> tuple[str, str]:
        """The callback: (session token, where to go). Refused for a foreign, replayed or
        expired state, a refusal at the provider, or an ID token that fails a check."""
        client = self.oidc.get(provider)
        if client is None:
            self.provider(provider)
            raise Invalid("this school login has no callback")
        pending = self._pending.pop(state, None) if state else None
        if pending is None or pending.provider != provider:
            raise Refused(
                "this sign-in link was already used or has expired; start again from the "
                "login page",
                "state_unknown",
                400,
            )
        if not browser or not hmac.compare_digest(token_hash(browser), pending.browser):
            raise Refused(
                "this sign-in was started in another browser; start again from the login page "
                "in this one",
                "state_foreign",
                400,
            )
        if error:
            raise Refused(
                f"{client.provider.name} did not sign you in ({error[:80]}); try again",
                "provider_refused",
            )
        if not code:
            raise Refused("the provider's answer has no code; start again", "no_code", 400)
        verified = await client.finish(pending.authorization, code)
        claims = verified.claims
        p = client.provider
        email = str(claims.get("email") or "")
        verified_email = claims.get("email_verified") is True
        if email and p.require_verified_email and not verified_email:
            await self._refused(p.id, "email_unverified", str(claims.get("sub")), address)
            raise Refused(
                f"your e-mail address at {p.name} is not verified; verify it there (follow "
                "the link the school sent you) and log in again",
                "email_unverified",
                403,
            )
        attributes = {name: claim_values(claims, name) for name in p.rule_claims}
        person = Person(
            provider=p.id,
            subject=str(claims["sub"]),
            preferred=str(claims.get(p.username_claim) or ""),
            email=email,
            email_verified=verified_email or not p.require_verified_email,
            display_name=str(claims.get("name") or ""),
            attributes=attributes,
            refresh_token=verified.refresh_token,
        )
        return await self.sign_in(person, address), pending.next

    # -- LDAP ----------------------------------------------------------------------

    async def password_login(self, provider: str, login: str, password: str, address: str) -> str:
        directory = self.ldap.get(provider)
        if directory is None:
            self.provider(provider)
            raise Invalid("this school login happens at the school's own page")
        try:
            entry: DirectoryEntry = await asyncio.to_thread(directory.authenticate, login, password)
        except Refused as refused:
            await self._refused(provider, refused.code, login[:100], address)
            raise
        except Invalid as invalid:
            await self._refused(provider, "invalid_name", login[:100], address)
            raise Refused(invalid.message, "invalid_name", 400) from None
        person = Person(
            provider=provider,
            subject=entry.dn,
            preferred=entry.login,
            email=entry.email,
            email_verified=True,  # the school's directory is the source of the address
            display_name=entry.display_name,
            attributes={GROUPS: entry.groups},
        )
        return await self.sign_in(person, address)

    # -- accounts ------------------------------------------------------------------

    async def _refused(self, provider: str, code: str, who: str, address: str) -> None:
        async with self.db.session() as session:
            audit.record(
                session, f"school:{provider}", "auth.login_refused", who, code=code, address=address
            )

    async def _rules(self, session: AsyncSession) -> list[RoleRule]:
        rows = (await session.scalars(select(DirectoryRule).order_by(DirectoryRule.id))).all()
        return [
            RoleRule(
                r.source,
                r.attribute,
                r.value,
                Role(r.role) if r.role else None,
                r.course,
                r.provider,
            )
            for r in rows
        ]

    async def sign_in(self, person: Person, address: str) -> str:
        """Create or update the account the person's directory identity is tied to and
        open a session for it; returns the session's token."""
        provider = self.provider(person.provider)
        async with self.db.session() as session:
            decision = decide(
                await self._rules(session), provider.id, person.attributes, provider.fallback_role
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
            await self._take_pre_enrolments(session, user, person.email)
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

    async def _take_pre_enrolments(self, session: AsyncSession, user: User, email: str) -> None:
        rows = (
            await session.execute(
                select(PreEnrolment, Group)
                .join(Group, Group.id == PreEnrolment.group_id)
                .where(PreEnrolment.email == email.lower())
            )
        ).all()
        for row, group in rows:
            if await session.get(Membership, (group.id, user.id)) is None:
                session.add(Membership(group_id=group.id, user_id=user.id, manager=False))
                audit.record(
                    session,
                    row.added_by,
                    "group.member_added",
                    f"group:{group.name}",
                    user=user.name,
                    pre_enrolled=email.lower(),
                )
            await session.delete(row)

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

    # -- rules (the System page) -----------------------------------------------------

    async def list_rules(self, actor: Principal) -> list[DirectoryRule]:
        roles.require_admin(actor, "see the school login's rules")
        async with self.db.session() as session:
            return list(
                (await session.scalars(select(DirectoryRule).order_by(DirectoryRule.id))).all()
            )

    async def add_rule(self, actor: Principal, rule: RuleIn) -> DirectoryRule:
        """The new rule, added and audited in one transaction."""
        roles.require_admin(actor, "map the school's directory to roles and courses")
        if rule.provider:
            self.provider(rule.provider)
        async with self.db.session() as session:
            return await self._add_rule(session, actor, rule)

    async def _add_rule(
        self, session: AsyncSession, actor: Principal, rule: RuleIn
    ) -> DirectoryRule:
        if rule.course and not await session.scalar(
            select(Group.id).where(Group.name == rule.course)
        ):
            raise NotFound(f"there is no course '{rule.course}'; create it first")
        row = DirectoryRule(
            provider=rule.provider,
            source=rule.source,
            attribute=rule.attribute if rule.source == "claim" else "",
            value=rule.value.strip(),
            role=rule.role.value if rule.role else None,
            course=rule.course,
            created_by=actor.name,
        )
        session.add(row)
        await session.flush()
        audit.record(
            session,
            actor.name,
            "school.rule_added",
            f"school_rule:{row.id}",
            provider=row.provider,
            source=row.source,
            attribute=row.attribute,
            value=row.value,
            role=row.role,
            course=row.course,
        )
        return row

    async def delete_rule(self, actor: Principal, rule_id: int) -> None:
        roles.require_admin(actor, "map the school's directory to roles and courses")
        async with self.db.session() as session:
            row = await session.get(DirectoryRule, rule_id)
            if row is None:
                raise NotFound(f"there is no school login rule {rule_id}")
            await session.delete(row)
            audit.record(
                session,
                actor.name,
                "school.rule_deleted",
                f"school_rule:{rule_id}",
                value=row.value,
            )

    # -- pre-enrolment -----------------------------------------------------------------

    async def pre_enrol(self, actor: Principal, group_name: str, text: str) -> PreEnrolOut:
        """Course places for students who have not logged in yet, by e-mail; all or
        nothing (a bad address refuses the file with its line)."""
        async with self.db.session() as session:
            return PreEnrolOut(**await self._pre_enrol(session, actor, group_name, text))

    async def _pre_enrol(
        self, session: AsyncSession, actor: Principal, group_name: str, text: str
    ) -> dict[str, list[str]]:
        group = await session.scalar(select(Group).where(Group.name == group_name))
        if group is None:
            raise NotFound(f"there is no group '{group_name}'")
        roles.require_group_manager(actor, group.id, group.name)
        emails = parse_emails(text)
        existing = set(
            (
                await session.scalars(
                    select(PreEnrolment.email).where(PreEnrolment.group_id == group.id)
                )
            ).all()
        )
        accounts = set(
            (await session.scalars(select(User.email).where(User.email.in_(emails)))).all()
        )
        result: dict[str, list[str]] = {"added": [], "already": [], "existing_accounts": []}
        for email in emails:
            if email in accounts:
                result["existing_accounts"].append(email)
            elif email in existing:
                result["already"].append(email)
            else:
                session.add(PreEnrolment(email=email, group_id=group.id, added_by=actor.name))
                result["added"].append(email)
        audit.record(
            session,
            actor.name,
            "group.pre_enrolled",
            f"group:{group.name}",
            added=len(result["added"]),
            already=len(result["already"]),
        )
        return result

    async def pre_enrolments(self, actor: Principal, group_name: str) -> list[str]:
        async with self.db.session() as session:
            group = await session.scalar(select(Group).where(Group.name == group_name))
            if group is None:
                raise NotFound(f"there is no group '{group_name}'")
            roles.require_group_manager(actor, group.id, group.name)
            rows = await session.scalars(
                select(PreEnrolment.email)
                .where(PreEnrolment.group_id == group.id)
                .order_by(PreEnrolment.email)
            )
            return list(rows.all())

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
            return await asyncio.to_thread(self.ldap[provider].still_enabled, subject), None
        client = self.oidc.get(provider)
        refresh = self.sealer.open(sealed)
        if client is None or not refresh:
            return None, None
        known, renewed = await client.still_known(refresh)
        return known, renewed

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

    async def login_context(self, signed_out: str = "") -> dict:
        """What the login page shows of the school logins: a button per OpenID provider,
        a form per LDAP directory, and after a log-out the provider's end-session link."""
        end_session = None
        client = self.oidc.get(signed_out)
        if client is not None:
            url = await client.end_session_url(self.settings.base_url + "/login")
            if url:
                end_session = {"name": client.provider.name, "url": url}
        return {"school_logins": self.choices(), "end_session": end_session}


def parse_emails(text: str) -> list[str]:
    """The `email` column of a CSV list (header `email`, `e-mail` or `mail`), lower-cased,
    each checked; Invalid names every bad line."""
    reader = csv.reader(io.StringIO(text))
    rows = [row for row in reader if any(cell.strip() for cell in row)]
    if not rows:
        raise Invalid("the list is empty; give a CSV file with an 'email' column")
    header = [cell.strip().lower() for cell in rows[0]]
    column = next((i for i, h in enumerate(header) if h in ("email", "e-mail", "mail")), None)
    if column is None:
        raise Invalid("the first line must be a header with an 'email' column")
    if len(rows) - 1 > MAX_PRE_ENROL:
        raise Invalid(f"a list may hold at most {MAX_PRE_ENROL} addresses")
    emails: list[str] = []
    problems: list[str] = []
    for number, row in enumerate(rows[1:], start=2):
        value = row[column].strip().lower() if column < len(row) else ""
        if not value or "@" not in value or not EMAIL.fullmatch(value) or len(value) > 320:
            problems.append(f"line {number}: '{value[:60]}' is not an e-mail address")
        elif value not in emails:
            emails.append(value)
    if problems:
        shown = "; ".join(problems[:10])
        raise Invalid(f"nothing was added: {shown}", problems=problems)
    return emails
