"""The shell-facing method table: each connection must `initialize` before it calls anything else.

The handshake is per connection (`host.connections.current_connection`). Before it, `initialize` and
`ping` are open to every connection; `shutdown` only to the stdio shell that launched the host, so a
socket client that has not shown the host's token cannot stop it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from pydantic import BaseModel

from host.connections import current_connection
from host.errors import NotInitializedError
from protocol.dispatch import Router

__all__ = ["ShellTable", "BeforeInit"]

P = TypeVar("P", bound=BaseModel)

BeforeInit = Literal["refused", "open", "stdio"]
"""Who may call a method before initializing: nobody, every connection, or only the stdio shell."""


def _may_call(before_init: BeforeInit) -> bool:
    conn = current_connection()
    if conn is not None and conn.initialized:
        return True
    if before_init == "open":
        return True
    # Outside any connection (a direct call in a test) counts as the stdio shell.
    return before_init == "stdio" and (conn is None or conn.origin == "stdio")


class ShellTable:
    """Adds shell methods to a router, each guarded by its connection's handshake."""

    def __init__(self, router: Router) -> None:
        self.router = router

    def add(
        self,
        name: str,
        params_model: type[P],
        handler: Callable[[P], Awaitable[BaseModel | None]],
        *,
        before_init: BeforeInit = "refused",
    ) -> None:
        async def guarded(p: P) -> BaseModel | None:
            if not _may_call(before_init):
                raise NotInitializedError(f"call initialize before {name}")
            return await handler(p)

        self.router.add(name, params_model, guarded)
