"""The kernel's environment: an allowlist of the host's variables, never the whole of it.

The kernel runs model calls and tools for agents, so nothing of the host's environment that it does
not need may reach it: no cloud credentials, tokens or keys a person happened to export (provider keys
travel per run, from the secrets store). It keeps what a process needs to run at all (PATH, HOME, the
user, the locale and time zone, the temp dir), what Python needs to find this installation, the
proxy and CA settings an HTTP client honours, and Hearth's own `HEARTH_*` settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["KERNEL_ENV_NAMES", "KERNEL_ENV_PREFIXES", "kernel_environment"]

KERNEL_ENV_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONUTF8",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONFAULTHANDLER",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    }
)
"""Variables passed through by name."""

KERNEL_ENV_PREFIXES = ("LC_", "HEARTH_")
"""Variables passed through by prefix: the locale categories and Hearth's own settings."""


def kernel_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowlisted part of `environ` (the host's own environment by default)."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if name in KERNEL_ENV_NAMES or name.startswith(KERNEL_ENV_PREFIXES)
    }
