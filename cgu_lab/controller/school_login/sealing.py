"""Sealing the refresh tokens kept for the periodic check: a stolen database copy must
not hand out tokens that act at the school's provider. The key lives in the
installation's secrets folder (0600), beside the notebook-origin key."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken


class Sealer:
    def __init__(self, secrets_dir: Path) -> None:
        self.path = secrets_dir / "school-login.key"
        self._fernet: Fernet | None = None

    def _key(self) -> Fernet:
        if self._fernet is None:
            if not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as out:
                    out.write(Fernet.generate_key())
            self._fernet = Fernet(self.path.read_bytes().strip())
        return self._fernet

    def seal(self, text: str) -> str:
        return self._key().encrypt(text.encode()).decode() if text else ""

    def open(self, sealed: str) -> str:
        if not sealed:
            return ""
        try:
            return self._key().decrypt(sealed.encode()).decode()
        except InvalidToken:
            return ""
