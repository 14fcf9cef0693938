"""What a school configures (providers) and what the API reads and writes (rules,
pre-enrolments).

Providers come from `CGU_LAB_SCHOOL_PROVIDERS` (a JSON list) or the file named by
`CGU_LAB_SCHOOL_PROVIDERS_FILE`, checked here when the controller starts, so a typo
stops it with the field's name instead of failing a student's login later. Client
secrets and bind passwords are `SecretStr`: they never appear in a log or a repr.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, TypeAdapter, model_validator

from ...core.names import LABEL_PATTERN
from ...core.roles import Role

ProviderId = Annotated[str, Field(pattern=LABEL_PATTERN, max_length=63)]
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Provider(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: ProviderId
    # "Log in with <name>" on the login page
    name: str = Field(min_length=1, max_length=80)
    # The role of a user no rule maps; "none" lets in only mapped users.
    default_role: Role | Literal["none"] = Role.STUDENT

    @property
    def fallback_role(self) -> Role | None:
        return None if self.default_role == "none" else Role(self.default_role)


class OidcProvider(_Provider):
    """An OpenID Connect provider (Entra ID, Google, Keycloak...): discovery from
    `issuer`, authorization code with PKCE, the ID token checked against its JWKS."""

    kind: Literal["oidc"]
    issuer: str = Field(min_length=8, max_length=500)
    client_id: str = Field(min_length=1, max_length=500)
    client_secret: SecretStr = SecretStr("")
    scopes: list[str] = ["openid", "email", "profile"]
    # the claim that becomes the platform user name (else the e-mail's local part)
    username_claim: str = "preferred_username"
    # claims whose values the rules may name (e.g. "groups", "roles", "realm_access.roles")
    rule_claims: list[str] = ["groups", "roles"]
    # refuse a login whose e-mail the provider has not verified (Entra ID sends no
    # `email_verified`: set false there, the account is keyed by `sub` in any case)
    require_verified_email: bool = True

    @model_validator(mode="after")
    def _https(self) -> OidcProvider:
        parts = urlsplit(self.issuer)
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in _LOOPBACK):
            raise ValueError(f"provider {self.id}: the issuer must be an https:// URL")
        if "openid" not in self.scopes:
            self.scopes = ["openid", *self.scopes]
        return self


class LdapProvider(_Provider):
    """An LDAP or Active Directory server: the user's own bind over StartTLS or LDAPS."""

    kind: Literal["ldap"]
    url: str = Field(pattern=r"^ldaps?://", max_length=500)
    # required for ldap:// URLs (refused without it), meaningless for ldaps://
    start_tls: bool = True
    # the CA that signed the server's certificate (else the system's)
    ca_file: Path | None = None
    # where users are found, and how: {login} is the typed name, escaped (RFC 4515)
    search_base: str = Field(min_length=1)
    search_filter: str = "(&(objectClass=person)(uid={login}))"
    # a service account to search with (and for the periodic check); without it
    # the user's DN is `user_dn_template` ({login} escaped as RFC 4514 says)
    bind_dn: str = ""
    bind_password: SecretStr = SecretStr("")
    user_dn_template: str = ""
    # groups: the entry's memberOf, and/or a search under group_base
    group_base: str = ""
    group_filter: str = "(|(member={dn})(uniqueMember={dn}))"
    username_attribute: str = "uid"
    email_attribute: str = "mail"
    display_name_attribute: str = "cn"
    # an entry matching this is disabled (AD: "(userAccountControl:1.2.840.113556.1.4.803:=2)")
    disabled_filter: str = ""
    timeout: float = Field(default=10, gt=0)

    @model_validator(mode="after")
    def _secure(self) -> LdapProvider:
        if self.url.startswith("ldap://") and not self.start_tls:
            raise ValueError(
                f"provider {self.id}: ldap:// needs start_tls (passwords never travel in clear)"
            )
        if "{login}" not in self.search_filter:
            raise ValueError(f"provider {self.id}: search_filter must contain {{login}}")
        if not self.bind_dn and "{login}" not in self.user_dn_template:
            raise ValueError(
                f"provider {self.id}: give bind_dn (a service account) or user_dn_template"
            )
        return self


Provider = Annotated[OidcProvider | LdapProvider, Field(discriminator="kind")]
_PROVIDERS = TypeAdapter(list[Provider])


def load_providers(text: str, file: Path | None) -> list[OidcProvider | LdapProvider]:
    """The configured providers; ValueError names the problem (never a secret's value)."""
    if file is not None:
        text = Path(file).read_text()
    if not text.strip():
        return []
    try:
        providers = _PROVIDERS.validate_python(json.loads(text))
    except json.JSONDecodeError as error:
        raise ValueError(f"the school providers are not valid JSON: {error.msg}") from None
    ids = [p.id for p in providers]
    if len(set(ids)) != len(ids):
        raise ValueError("two school providers have the same id")
    return providers


# -- API ---------------------------------------------------------------------------


class RuleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Annotated[str, Field(max_length=63)] = ""
    source: Literal["claim", "group"]
    attribute: Annotated[str, Field(max_length=200)] = ""
    value: Annotated[str, Field(min_length=1, max_length=500)]
    role: Role | None = None
    course: Annotated[str, Field(pattern=LABEL_PATTERN, max_length=63)] | None = None

    @model_validator(mode="after")
    def _something(self) -> RuleIn:
        if self.role is None and self.course is None:
            raise ValueError("a rule gives a role, a course or both")
        if self.source == "claim" and not self.attribute:
            raise ValueError("a claim rule names its claim (attribute), e.g. groups")
        return self


class RuleOut(RuleIn):
    id: int
    created_by: str


class ProviderOut(BaseModel):
    id: str
    name: str
    kind: str
    default_role: str
    redirect_uri: str | None = Field(description="what to register at an OpenID provider")


class DirectorySettingsOut(BaseModel):
    providers: list[ProviderOut]
    rules: list[RuleOut]


class PreEnrolIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    csv: Annotated[str, Field(max_length=1_000_000)] = Field(
        description="a CSV list with an `email` column (other columns are ignored)"
    )


class PreEnrolOut(BaseModel):
    added: list[str]
    already: list[str] = Field(description="addresses that were waiting already")
    existing_accounts: list[str] = Field(
        description="addresses of existing accounts: enrol them from the course's Members tab"
    )


# -- what the login page shows of them (accounts/pages.py) --------------------------------


@dataclass(frozen=True)
class SchoolLoginChoice:
    """A button (OpenID) or a form (LDAP) on the login page."""

    id: str
    name: str
    kind: str


@dataclass(frozen=True)
class EndSessionLink:
    """After a log-out: the provider's own log-out, whose name the page says."""

    name: str
    url: str


@dataclass(frozen=True)
class LoginChoices:
    """The school logins the login page offers, and the end-session link after a log-out."""

    school_logins: list[SchoolLoginChoice]
    end_session: EndSessionLink | None
