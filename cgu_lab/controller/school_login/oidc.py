"""The controller as an OpenID Connect client: authorization code with PKCE.

Protocol pieces are Authlib's (the authorization request, the token request, PKCE's
S256 challenge, random tokens), the ID token's signature and claims are checked by
joserfc (Authlib's JOSE library): no hand-rolled JWT code. What this module decides:

- the provider's metadata comes from its issuer's discovery document, and that
  document must name the same issuer (a provider cannot speak for another);
- keys come from its `jwks_uri`, cached, and fetched again when a token names a key
  id the cache lacks (a key rotation), at most once a second;
- only asymmetric signatures are accepted, so `alg: none` and an HMAC "signed" with
  the provider's public key (the classic confusion) are refused before any key is used;
- `iss`, `aud` (and `azp` when several audiences), `exp`, `iat`, `sub` and the `nonce`
  of this very login are required; the redirect URI is the one configured, never one
  derived from the request.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.errors import (
    ExpiredTokenError,
    InvalidClaimError,
    InvalidKeyIdError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import KeySet

from ..clock import Clock
from .refusals import Refused
from .schemas import OidcProvider

log = logging.getLogger("cgu_lab.school_login")

ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
METADATA_SECONDS = 3600
KEYS_REFETCH_SECONDS = 1.0
LEEWAY_SECONDS = 60


@dataclass(frozen=True)
class Authorization:
    """What a login in progress remembers between the redirect and the callback."""

    url: str
    state: str
    nonce: str
    verifier: str


@dataclass(frozen=True)
class Verified:
    claims: dict
    refresh_token: str


class OidcClient:
    def __init__(self, provider: OidcProvider, redirect_uri: str, clock: Clock) -> None:
        """`clock`: the platform's, which times the discovery document's and the keys'
        freshness (a test moves it instead of waiting)."""
        self.provider = provider
        self.clock = clock
        self.redirect_uri = redirect_uri
        self._metadata: dict | None = None
        self._metadata_at = 0.0
        self._keys: KeySet | None = None
        self._keys_at = 0.0

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=10, follow_redirects=False)

    def _unreachable(self, error: Exception) -> Refused:
        log.warning("provider %s: %s", self.provider.id, type(error).__name__)
        return Refused(
            f"{self.provider.name} does not answer right now; try again in a minute, "
            "or log in with your cgu-lab password",
            "provider_unreachable",
            503,
        )

    async def metadata(self) -> dict:
        """The provider's discovery document, cached for an hour."""
        if self._metadata and self.clock.monotonic() - self._metadata_at < METADATA_SECONDS:
            return self._metadata
        url = self.provider.issuer.rstrip("/") + "/.well-known/openid-configuration"
        try:
            async with self._http() as http:
                reply = await http.get(url)
                reply.raise_for_status()
                document = reply.json()
        except (httpx.HTTPError, ValueError) as error:
            raise self._unreachable(error) from None
        if document.get("issuer") != self.provider.issuer:
            log.error(
                "provider %s: discovery names issuer %r", self.provider.id, document.get("issuer")
            )
            raise Refused(
                f"{self.provider.name}'s configuration names another issuer; "
                "an administrator must check the provider's settings",
                "issuer_mismatch",
                502,
            )
        self._metadata, self._metadata_at = document, self.clock.monotonic()
        return document

    async def keys(self, refresh: bool = False) -> KeySet:
        """The provider's signing keys; `refresh` fetches them again (a rotated key)."""
        if self._keys is not None and not refresh:
            return self._keys
        if self._keys is not None and self.clock.monotonic() - self._keys_at < KEYS_REFETCH_SECONDS:
            return self._keys
        metadata = await self.metadata()
        try:
            async with self._http() as http:
                reply = await http.get(metadata["jwks_uri"])
                reply.raise_for_status()
                self._keys = KeySet.import_key_set(reply.json())
        except (httpx.HTTPError, ValueError, KeyError, JoseError) as error:
            raise self._unreachable(error) from None
        self._keys_at = self.clock.monotonic()
        return self._keys

    async def authorization(self) -> Authorization:
        """Where to send the browser: the provider's login, for this client, with a fresh
        state, nonce and PKCE verifier."""
        metadata = await self.metadata()
        state, nonce, verifier = generate_token(32), generate_token(32), generate_token(64)
        url = prepare_grant_uri(
            metadata["authorization_endpoint"],
            self.provider.client_id,
            "code",
            redirect_uri=self.redirect_uri,
            scope=" ".join(self.provider.scopes),
            state=state,
            nonce=nonce,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
        )
        return Authorization(url, state, nonce, verifier)

    async def _token_request(self, **fields: str) -> dict:
        """The token endpoint's JSON answer: a mapping as the provider wrote it (it names
        its own fields beside the standard ones), so it stays a dict."""
        metadata = await self.metadata()
        body = prepare_token_request(fields.pop("grant_type"), **fields)
        secret = self.provider.client_secret.get_secret_value()
        auth = (self.provider.client_id, secret) if secret else None
        if not secret:
            body += "&client_id=" + httpx.QueryParams({"c": self.provider.client_id})["c"]
        try:
            async with self._http() as http:
                reply = await http.post(
                    metadata["token_endpoint"],
                    content=body,
                    auth=auth,
                    headers={
                        "Content-Type": "application/x-www-form-urlencoded",
                        "Accept": "application/json",
                    },
                )
        except httpx.HTTPError as error:
            raise self._unreachable(error) from None
        try:
            answer = reply.json()
        except ValueError:
            answer = {}
        if reply.status_code != 200:
            raise Refused(
                f"{self.provider.name} did not accept this sign-in "
                f"({answer.get('error', reply.status_code)}); start again from the login page",
                "token_refused",
            )
        return answer

    async def finish(self, authorization: Authorization, code: str) -> Verified:
        """Exchange the code and verify the ID token; Refused says what was wrong."""
        answer = await self._token_request(
            grant_type="authorization_code",
            code=code,
            redirect_uri=self.redirect_uri,
            code_verifier=authorization.verifier,
        )
        id_token = answer.get("id_token")
        if not isinstance(id_token, str):
            raise Refused(
                f"{self.provider.name} sent no ID token; an administrator must check that "
                "the client asks for the openid scope",
                "no_id_token",
            )
        claims = await self.verify(id_token, authorization.nonce)
        return Verified(claims, str(answer.get("refresh_token") or ""))

    async def verify(self, id_token: str, nonce: str) -> dict:
        """The ID token's claims once checked: a dict, as each provider sends claims of
        its own (the school's mapping rules read them by name)."""
        metadata = await self.metadata()
        offered = metadata.get("id_token_signing_alg_values_supported") or ["RS256"]
        algorithms = [a for a in offered if a in ASYMMETRIC]
        try:
            token = self._decode(id_token, await self.keys(), algorithms)
        except _UnknownKey:
            try:
                token = self._decode(id_token, await self.keys(refresh=True), algorithms)
            except _UnknownKey:
                raise _unsigned() from None
        registry = jwt.JWTClaimsRegistry(
            leeway=LEEWAY_SECONDS,
            iss={"essential": True, "value": self.provider.issuer},
            sub={"essential": True},
            exp={"essential": True},
            iat={"essential": True},
            nonce={"essential": True, "value": nonce},
        )
        try:
            registry.validate(token.claims)
        except ExpiredTokenError:
            raise Refused(
                "the sign-in took too long or your clock is off: the provider's token has "
                "expired; start again from the login page",
                "token_expired",
            ) from None
        except (InvalidClaimError, MissingClaimError) as error:
            claim = getattr(error, "claim", "")
            if claim == "nonce":
                raise Refused(
                    "this sign-in answer belongs to another login (its nonce does not match); "
                    "start again from the login page",
                    "nonce_mismatch",
                ) from None
            raise Refused(
                f"the provider's token is not valid ({claim or error}); start again from "
                "the login page, and tell an administrator if it keeps happening",
                "token_invalid",
            ) from None
        audience = token.claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        azp = token.claims.get("azp")
        if self.provider.client_id not in audiences or (
            (len(audiences) > 1 or azp is not None) and azp != self.provider.client_id
        ):
            raise Refused(
                "the provider's token was issued to another application, not cgu-lab; "
                "start again from cgu-lab's login page",
                "wrong_audience",
            )
        return dict(token.claims)

    @staticmethod
    def _decode(id_token: str, keys: KeySet, algorithms: list[str]):
        try:
            return jwt.decode(id_token, keys, algorithms=algorithms)
        except InvalidKeyIdError:
            raise _UnknownKey from None
        except (JoseError, ValueError):
            raise _unsigned() from None

    async def still_known(self, refresh_token: str) -> tuple[bool | None, str]:
        """Ask the provider whether the user still exists: a refresh token that the
        provider refuses (invalid_grant) means no. None when the provider did not answer."""
        try:
            answer = await self._token_request(
                grant_type="refresh_token", refresh_token=refresh_token
            )
        except Refused as refused:
            if refused.code == "token_refused":
                return False, ""
            return None, refresh_token
        return True, str(answer.get("refresh_token") or refresh_token)

    async def end_session_url(self, post_logout: str) -> str | None:
        """The provider's log-out page (RP-initiated logout), when it offers one."""
        try:
            endpoint = (await self.metadata()).get("end_session_endpoint")
        except Refused:
            return None
        if not endpoint:
            return None
        query = httpx.QueryParams(
            {"client_id": self.provider.client_id, "post_logout_redirect_uri": post_logout}
        )
        return f"{endpoint}?{query}"


class _UnknownKey(Exception):
    """The token names a key the cached set lacks: fetch the set again once."""


def _unsigned() -> Refused:
    return Refused(
        "the provider's answer is not signed with one of its keys, so cgu-lab cannot trust "
        "it; start again from the login page, and tell an administrator if it keeps happening",
        "bad_signature",
    )
