"""API keys and roles: who may ask, who may change what the service answers from.

A key is shown once, when it is created (`saksi keys create`), and stored only as a SHA-256
of the whole token in `DATA_DIR/keys.json` (mode 0600). The token names its own id
(`saksi_<id>_<secret>`), so checking one is a dictionary lookup and one constant-time
comparison; the secret is 256 random bits, so a fast hash is the right one (a password hash
protects guessable secrets, and these are not).

Roles are ordered: **reader** asks and reads or replays traces, **curator** also ingests
into and deletes from its collections, **admin** also manages keys and may use every
collection. A key names the collections it may use (`*`: all) and the highest authority its
uploads may claim (`unknown` unless said otherwise): a curator's upload that declares
`authority: official` is recorded with the key's ceiling instead.

Every change is written to the audit log (key id, role, collections; never the secret).
The in-process CLI needs no key: it is local by nature, and acts as `local`.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .audit import LOCAL_KEY, AuditLog
from .errors import KeyManagementError
from .types import Authority

Role = Literal["reader", "curator", "admin"]
ROLES: tuple[str, ...] = ("reader", "curator", "admin")
ALL = "*"
FILE = "keys.json"
COLLECTION_NAME = r"^[a-z0-9][a-z0-9_-]{0,62}$"
AUTHORITY_ORDER: tuple[str, ...] = ("unknown", "media", "academic", "institutional", "primary", "official")
_TOKEN = re.compile(r"^saksi_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})$")


class ApiKey(BaseModel):
    """One key as stored (the hash, never the token)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(..., pattern=r"^[0-9a-f]{12}$")
    role: Role
    collections: tuple[str, ...] = Field(..., min_length=1)
    authority: Authority = "unknown"
    name: str = ""
    created: str
    created_by: str
    revoked: str | None = None
    sha256: str = Field(..., pattern=r"^[0-9a-f]{64}$")

    @property
    def actor(self) -> str:
        """How the audit log, traces and uploads name this key."""
        return f"key:{self.id}"

    @property
    def active(self) -> bool:
        return self.revoked is None

    def has_role(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)

    def may_use(self, collection: str) -> bool:
        return self.role == "admin" or ALL in self.collections or collection in self.collections

    def public(self) -> dict:
        """What `saksi keys ls` and GET /v1/keys show: everything but the hash."""
        return self.model_dump(exclude={"sha256"})


class _KeyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    keys: list[ApiKey] = []


def cap_authority(declared: str, ceiling: str) -> str:
    """The authority an upload is recorded with: what it declares, at most the key's ceiling."""
    order = AUTHORITY_ORDER
    return declared if order.index(declared) <= order.index(ceiling) else ceiling


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_collection_name(name: str) -> str:
    if name != ALL and not re.match(COLLECTION_NAME, name):
        raise KeyManagementError(f"collection name {name!r}: use lowercase letters, digits, '-' and '_' (at most 63), "
                        "starting with a letter or digit")
    return name


class KeyStore:
    """The keys of one data directory (its root: collections share one key file)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.path = self.root / FILE
        self._cache: tuple[float, int, dict[str, ApiKey]] | None = None

    # -- reading -------------------------------------------------------------------------------

    def _read(self) -> _KeyFile:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _KeyFile()
        except OSError as e:
            raise KeyManagementError(f"cannot read {self.path}: {e.strerror or e}") from None
        try:
            return _KeyFile.model_validate(json.loads(raw))
        except (ValueError, ValidationError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise KeyManagementError(f"{self.path} is not a key file ({first})") from None

    def keys(self) -> list[ApiKey]:
        return list(self._read().keys)

    def _by_id(self) -> dict[str, ApiKey]:
        """The keys, re-read whenever the file changed (a key revoked by the CLI stops working at once)."""
        try:
            st = self.path.stat()
            stamp = (st.st_mtime, st.st_size)
        except FileNotFoundError:
            return {}
        if self._cache is None or self._cache[:2] != stamp:
            self._cache = (*stamp, {k.id: k for k in self._read().keys})
        return self._cache[2]

    def any(self) -> bool:
        return any(k.active for k in self._by_id().values())

    def authenticate(self, token: str | None) -> ApiKey | None:
        """The active key this token is, or None (malformed, unknown, revoked or wrong secret)."""
        m = _TOKEN.match(token or "")
        if not m:
            return None
        key = self._by_id().get(m.group(1))
        if key is None or not hmac.compare_digest(key.sha256, _digest(token)):
            return None
        return key if key.active else None

    # -- changing ------------------------------------------------------------------------------

    def _change(self, change) -> ApiKey:
        """Read, change and write the file under an exclusive lock; atomically, mode 0600."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / (FILE + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                data = self._read()
                key = change(data)
                tmp = self.path.with_name(FILE + ".tmp")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(data.model_dump_json(indent=1))
                os.replace(tmp, self.path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        self._cache = None
        return key

    def create(self, role: str, collections: list[str] | tuple[str, ...] = ("default",), authority: str = "unknown",
               name: str = "", actor: str = LOCAL_KEY) -> tuple[ApiKey, str]:
        """A new key and its token (shown once; only its hash is kept)."""
        if role not in ROLES:
            raise KeyManagementError(f"role {role!r}: one of {', '.join(ROLES)}")
        if authority not in AUTHORITY_ORDER:
            raise KeyManagementError(f"authority {authority!r}: one of {', '.join(reversed(AUTHORITY_ORDER))}")
        collections = tuple(dict.fromkeys(check_collection_name(c) for c in collections)) or ("default",)
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        token = f"saksi_{token_id}_{secret}"
        key = ApiKey(id=token_id, role=role, collections=collections, authority=authority, name=name[:200],
                     created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), created_by=actor,
                     sha256=_digest(token))

        def add(data: _KeyFile) -> ApiKey:
            data.keys.append(key)
            return key

        self._change(add)
        AuditLog(self.root).append("key_create", key=actor, id=key.id, role=role, collections=list(collections),
                                   authority=authority, name=key.name)
        return key, token

    def revoke(self, key_id: str, actor: str = LOCAL_KEY) -> ApiKey:
        def drop(data: _KeyFile) -> ApiKey:
            for i, k in enumerate(data.keys):
                if k.id == key_id:
                    if k.revoked is not None:
                        return k
                    data.keys[i] = k.model_copy(update={
                        "revoked": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")})
                    return data.keys[i]
            raise KeyManagementError(f"no key {key_id!r} (see `saksi keys ls`)")

        key = self._change(drop)
        AuditLog(self.root).append("key_revoke", key=actor, id=key.id, role=key.role)
        return key
