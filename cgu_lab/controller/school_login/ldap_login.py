"""A school login with a user name and password on cgu-lab's own page, checked by the
school's LDAP directory (ldap.py binds as the person; it blocks, so it runs in a worker
thread). A refusal is audited before it is raised; the account is accounts.py's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ...core.directory import GROUPS
from ...core.errors import Invalid
from .accounts import Person, SchoolAccounts
from .ldap import DirectoryEntry, LdapDirectory
from .refusals import Refused
from .schemas import LdapProvider


class LdapLogins:
    def __init__(self, providers: Iterable[LdapProvider], accounts: SchoolAccounts) -> None:
        self.directories = {p.id: LdapDirectory(p) for p in providers}
        self.accounts = accounts

    def __contains__(self, provider: str) -> bool:
        return provider in self.directories

    async def password_login(self, provider: str, login: str, password: str, address: str) -> str:
        directory = self.directories.get(provider)
        if directory is None:
            self.accounts.provider(provider)
            raise Invalid("this school login happens at the school's own page")
        try:
            entry: DirectoryEntry = await asyncio.to_thread(directory.authenticate, login, password)
        except Refused as refused:
            await self.accounts.refused(provider, refused.code, login[:100], address)
            raise
        except Invalid as invalid:
            await self.accounts.refused(provider, "invalid_name", login[:100], address)
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
        return await self.accounts.sign_in(person, address)

    async def still_enabled(self, provider: str, subject: str) -> bool | None:
        """For the periodic check: does the directory still hold the entry, enabled
        (None: it could not tell)."""
        return await asyncio.to_thread(self.directories[provider].still_enabled, subject)
