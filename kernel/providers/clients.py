"""One SDK client per provider configuration, kept for the kernel's life.

Building an SDK client costs tens of milliseconds of CPU (its TLS context, its connection pool), and a
fresh client opens fresh connections. So each configuration (provider, base URL, key, timeouts) gets one
client, made on first use and reused by every later call with that configuration, connections kept alive.
A changed key or base URL is another configuration and gets its own client. No client is closed while the
kernel runs (a turn may still stream through it); `aclose` closes them all at kernel shutdown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, cast

__all__ = ["ClientKey", "ClientPool", "SdkClient"]

logger = logging.getLogger(__name__)


class SdkClient(Protocol):
    """What the pool needs of an SDK client (`openai.AsyncOpenAI`, `anthropic.AsyncAnthropic`)."""

    async def close(self) -> None: ...


C = TypeVar("C", bound=SdkClient)


@dataclass(frozen=True, slots=True)
class ClientKey:
    """A provider configuration: calls with equal keys share a client."""

    provider: str
    base_url: str
    api_key: str = field(repr=False)
    read_timeout: float
    connect_timeout: float


class ClientPool:
    """The SDK clients of one kernel, by configuration."""

    def __init__(self) -> None:
        self._clients: dict[ClientKey, SdkClient] = {}

    def __len__(self) -> int:
        return len(self._clients)

    def get(self, key: ClientKey, build: Callable[[], C]) -> C:
        """The client for `key`, built by `build` the first time the configuration is seen."""
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = build()
            logger.debug("new %s client for %s", key.provider, key.base_url)
        # Each key is built by one provider class, so the client stored under it is of the type it built.
        return cast(C, client)

    async def aclose(self) -> None:
        """Close every client (at kernel shutdown); a client that fails to close is logged, the rest still close."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await client.close()
            except (OSError, RuntimeError):  # shutdown goes on whatever one connection does while closing
                logger.exception("closing a model client failed")
