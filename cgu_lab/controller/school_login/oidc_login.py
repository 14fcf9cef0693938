"""A school login through an OpenID Connect provider, from the login button to the
callback: the browser is sent to the provider with a state only this controller made,
and only the browser that started the login (its binding cookie) may finish it, once,
within PENDING_SECONDS. The protocol itself is oidc.py's; the account is accounts.py's.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass

from cachetools import TTLCache

from ...core.directory import claim_values
from ...core.errors import Invalid
from ..accounts.security import new_token, token_hash
from ..clock import Clock
from .accounts import Person, SchoolAccounts
from .oidc import Authorization, OidcClient
from .refusals import Refused
from .schemas import EndSessionLink, OidcProvider
from .sealing import Sealer

PENDING_SECONDS = 600
MAX_PENDING = 10_000


def redirect_uri(base_url: str, provider: str) -> str:
    """Exactly what the provider must have registered: from the configured public URL,
    never from the request's Host header (which a client chooses)."""
    return f"{base_url}/login/school/{provider}/callback"


@dataclass(frozen=True)
class Pending:
    provider: str
    authorization: Authorization
    browser: str  # the hash of the browser's binding cookie
    next: str


class OidcLogins:
    def __init__(
        self,
        providers: Iterable[OidcProvider],
        base_url: str,
        clock: Clock,
        accounts: SchoolAccounts,
        sealer: Sealer,
    ) -> None:
        """`clock`: the platform's, for the tokens' checks and the pending logins' cache;
        `sealer` opens the refresh tokens `accounts` sealed, for the periodic check."""
        self.clients = {p.id: OidcClient(p, redirect_uri(base_url, p.id), clock) for p in providers}
        self.accounts = accounts
        self.sealer = sealer
        self._pending: TTLCache[str, Pending] = TTLCache(
            MAX_PENDING, PENDING_SECONDS, timer=clock.monotonic
        )

    def __contains__(self, provider: str) -> bool:
        return provider in self.clients

    async def begin(self, provider: str, next: str) -> tuple[str, str]:
        """The provider's login URL and the secret the browser keeps (a cookie) so that
        only the browser that started a login can finish it."""
        client = self.clients.get(provider)
        if client is None:
            self.accounts.provider(provider)
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
        client = self.clients.get(provider)
        if client is None:
            self.accounts.provider(provider)
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
            await self.accounts.refused(p.id, "email_unverified", str(claims.get("sub")), address)
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
        return await self.accounts.sign_in(person, address), pending.next

    async def still_known(self, provider: str, sealed: str) -> tuple[bool | None, str | None]:
        """For the periodic check: (does the provider still know the user, the refresh
        token it renewed); (None, None) when there is no token to ask with."""
        client = self.clients.get(provider)
        refresh = self.sealer.open(sealed)
        if client is None or not refresh:
            return None, None
        return await client.still_known(refresh)

    async def end_session(self, provider: str, post_logout: str) -> EndSessionLink | None:
        """The provider's own log-out link for the login page after a log-out, if it has
        one."""
        client = self.clients.get(provider)
        if client is None:
            return None
        url = await client.end_session_url(post_logout)
        return EndSessionLink(name=client.provider.name, url=url) if url else None
