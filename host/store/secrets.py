"""The host's secrets: provider API keys, encrypted at rest in `secrets.bin` under a key in `secrets.key`.

Invariants: both files are mode 0600 (a looser key file is tightened and a warning names it); every
write of `secrets.bin` is atomic; a `secrets.bin` that cannot be decrypted raises `CorruptFileError`
naming the file and is never overwritten; a value never appears in a result, a log line, an error
message or a repr. `resolve_api_key` is how the host finds the key for a model before a turn.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import threading
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from host.errors import CorruptFileError, HostError, InvalidRequestError, NotFoundError
from host.store.atomic import create_bytes_atomic, write_bytes_atomic
from protocol.errors import PROVIDER_ERROR
from protocol.ids import SECRET_NAME_PATTERN
from protocol.models.secrets import KEYED_PROVIDERS, MAX_SECRET_CHARS, provider_needs_key

__all__ = ["SecretStore", "InsecureKeyFileError", "MissingApiKeyError", "ensure_private", "resolve_api_key"]

logger = logging.getLogger(__name__)

_NAME = re.compile(SECRET_NAME_PATTERN)
_FORMAT_VERSION = 1
_OWNER_ONLY = 0o600


class InsecureKeyFileError(HostError):
    """The key file is readable by others and could not be made private."""


class MissingApiKeyError(HostError):
    """A model needs an API key and none is stored."""

    CODE = PROVIDER_ERROR


class SecretStore:
    """Named secrets in `<data_dir>/secrets.bin`; `list` gives names only, `get` is for the host itself."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.key_path = self.data_dir / "secrets.key"
        self.path = self.data_dir / "secrets.bin"
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SecretStore({str(self.data_dir)!r})"

    def set(self, name: str, value: str) -> bool:
        """Store `value` under `name`, replacing any earlier value.

        Surrounding whitespace (a pasted newline) is dropped from the value.

        Returns:
            True when an earlier value was replaced.

        Raises:
            InvalidRequestError: the name is not a slug, or the value is empty or too long.
            CorruptFileError: `secrets.bin` exists but cannot be decrypted; it is left untouched.
        """
        _check_name(name)
        value = value.strip()
        if not value or len(value) > MAX_SECRET_CHARS:
            raise InvalidRequestError(f"the value for secret {name!r} must be 1 to {MAX_SECRET_CHARS} characters")
        with self._lock:
            secrets = self._read()
            replaced = name in secrets
            secrets[name] = value
            self._write(secrets)
        logger.info("secret %r %s", name, "replaced" if replaced else "stored")
        return replaced

    def list(self) -> list[str]:
        """The names of the stored secrets, sorted; never their values.

        Raises:
            CorruptFileError: `secrets.bin` cannot be decrypted.
        """
        with self._lock:
            return sorted(self._read())

    def get(self, name: str) -> str | None:
        """The value stored under `name`, or None. Host-internal: never send it to a shell.

        Raises:
            CorruptFileError: `secrets.bin` cannot be decrypted.
        """
        with self._lock:
            return self._read().get(name)

    def delete(self, name: str) -> None:
        """Forget the secret `name`.

        Raises:
            InvalidRequestError: the name is not a slug.
            NotFoundError: no secret has that name.
            CorruptFileError: `secrets.bin` cannot be decrypted; it is left untouched.
        """
        _check_name(name)
        with self._lock:
            secrets = self._read()
            if name not in secrets:
                raise NotFoundError(f"no secret named {name!r}")
            del secrets[name]
            self._write(secrets)
        logger.info("secret %r deleted", name)

    def _read(self) -> dict[str, str]:
        try:
            token = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        ensure_private(self.path)
        fernet = self._fernet(create=False)
        try:
            payload = json.loads(fernet.decrypt(token))
        except InvalidToken:
            raise CorruptFileError(
                f"{self.path} cannot be decrypted with {self.key_path} (the file is damaged or the key was "
                "replaced); it was left as it is: restore both files from a backup, or move secrets.bin "
                "aside and set the keys again"
            ) from None
        except ValueError:
            payload = None
        secrets = payload.get("secrets") if isinstance(payload, dict) else None
        if not isinstance(secrets, dict) or not all(isinstance(v, str) for v in secrets.values()):
            raise CorruptFileError(f"{self.path} decrypts but does not hold a secrets table; it was left as it is")
        return {str(k): v for k, v in secrets.items()}

    def _write(self, secrets: dict[str, str]) -> None:
        payload = json.dumps({"version": _FORMAT_VERSION, "secrets": secrets}, sort_keys=True).encode("utf-8")
        token = self._fernet(create=True).encrypt(payload)
        write_bytes_atomic(self.path, token, mode=_OWNER_ONLY)

    def _fernet(self, *, create: bool) -> Fernet:
        try:
            key = self.key_path.read_bytes()
        except FileNotFoundError:
            if not create or self.path.exists():
                # Without its key the store cannot be read; a fresh key would orphan what is there.
                raise CorruptFileError(
                    f"{self.path} exists but its key file {self.key_path} is missing; restore the key file "
                    "or move secrets.bin aside and set the keys again"
                ) from None
            key = self._create_key()
        ensure_private(self.key_path)
        try:
            return Fernet(key.strip())
        except ValueError:
            raise CorruptFileError(f"{self.key_path} does not hold a valid key; it was left as it is") from None

    def _create_key(self) -> bytes:
        """Write a new key file, mode 0600 from its first byte; a concurrent creator's key wins."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        key = Fernet.generate_key()
        if not create_bytes_atomic(self.key_path, key, mode=_OWNER_ONLY):
            return self.key_path.read_bytes()
        return key


def ensure_private(path: Path) -> None:
    """Tighten `path` to 0600 if others may read or write it, and say so.

    Raises:
        InsecureKeyFileError: it is readable by others and could not be made private.
    """
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077 == 0:
        return
    try:
        os.chmod(path, _OWNER_ONLY)
    except OSError as exc:
        raise InsecureKeyFileError(
            f"{path} is readable by other users (mode {mode:o}) and could not be made private: {exc.strerror}"
        ) from None
    logger.warning("%s was readable by other users (mode %o); it is now 0600", path, mode)


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise InvalidRequestError(
            f"secret names are lowercase slugs (letters, digits, '.', '_', '-'; at most 64): {name[:80]!r}"
        )


def resolve_api_key(store: SecretStore, provider: str, secret_name: str | None, base_url: str | None) -> str | None:
    """The API key for a model, from the store, or None when the model needs none.

    The secret is looked up under `secret_name`, or under the provider's name when the model names none.
    A key is required per `provider_needs_key`: remote APIs need one, loopback servers and the embedded
    model do not (a stored key for a loopback server is still used).

    Args:
        store: the host's secrets.
        provider: the model's provider (`openai`, `anthropic`, `local`, `scripted`).
        secret_name: the secret the model's settings name, if any.
        base_url: the model's base URL, if any.

    Returns:
        The key, or None for a model that needs none and has none.

    Raises:
        MissingApiKeyError: the model needs a key and none is stored (the message says how to add one).
        CorruptFileError: `secrets.bin` cannot be decrypted.
    """
    if provider not in KEYED_PROVIDERS:
        return None
    name = secret_name or provider
    value = store.get(name)
    if value is None and provider_needs_key(provider, base_url):
        raise MissingApiKeyError(
            f"no API key for {provider}: run `hearth secrets set {name}` or set one in the desktop's settings"
        )
    return value
