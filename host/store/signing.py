"""The installation's signing key: 32 random bytes in `<data dir>/signing.key` (0600), an HMAC-SHA256 key.

It signs what this installation vouches for (the archives it exports) so it can tell its own from anything
else later; no one else needs to check these signatures. Made at the first signature, kept beside
`secrets.key` (a host file agents are denied) and tightened like it; it is in no archive, result or log.
A signature names the key by `keyId`, a digest that does not reveal it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from pathlib import Path
from typing import Any

from host.errors import CorruptFileError
from host.store.atomic import create_bytes_atomic
from host.store.secrets import ensure_private

__all__ = ["SIGNATURE_ALG", "SigningKey"]

SIGNATURE_ALG = "HMAC-SHA256"
_KEY_BYTES = 32


def _canonical(statement: dict[str, Any]) -> bytes:
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class SigningKey:
    """The signing key of the installation whose data dir is `data_dir`."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / "signing.key"
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SigningKey({str(self.path)!r})"

    def sign(self, statement: dict[str, Any]) -> dict[str, Any]:
        """`statement` with `alg`, `keyId` and `mac` added; the key is made on first use.

        Raises:
            CorruptFileError: the key file holds no key.
            StorageError: the key file could not be written.
        """
        key = self._key(create=True)
        assert key is not None
        body = {**statement, "alg": SIGNATURE_ALG, "keyId": _key_id(key)}
        return {**body, "mac": hmac.new(key, _canonical(body), hashlib.sha256).hexdigest()}

    def check(self, signed: dict[str, Any]) -> str | None:
        """None when this installation signed exactly `signed`; otherwise why not, in words for a person.

        Raises:
            CorruptFileError: the key file holds no key.
        """
        mac = signed.get("mac")
        if signed.get("alg") != SIGNATURE_ALG or not isinstance(mac, str):
            return "its signature is not one this installation makes"
        key = self._key(create=False)
        if key is None or signed.get("keyId") != _key_id(key):
            return "it is signed by another installation"
        body = {name: value for name, value in signed.items() if name != "mac"}
        expected = hmac.new(key, _canonical(body), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, mac):
            return "its signature does not verify: it names this installation's key but was not made with it"
        return None

    def _key(self, *, create: bool) -> bytes | None:
        with self._lock:
            try:
                text = self.path.read_bytes()
            except FileNotFoundError:
                if not create:
                    return None
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fresh = secrets.token_hex(_KEY_BYTES).encode("ascii")
                if create_bytes_atomic(self.path, fresh, mode=0o600):
                    return bytes.fromhex(fresh.decode("ascii"))
                text = self.path.read_bytes()  # another process made it first: its key wins
            ensure_private(self.path)
            try:
                key = bytes.fromhex(text.decode("ascii").strip())
            except (UnicodeDecodeError, ValueError):
                key = b""
            if len(key) != _KEY_BYTES:
                raise CorruptFileError(
                    f"{self.path} does not hold a signing key; it was left as it is (move it aside and a new key is "
                    "made at the next export; archives signed with the old one then import as another "
                    "installation's)",
                    data={"path": str(self.path)},
                )
            return key


def _key_id(key: bytes) -> str:
    return hmac.new(key, b"hearth signing key id", hashlib.sha256).hexdigest()[:16]
