"""The shell-facing method table: every method but `initialize`, `ping` and `shutdown` needs `initialize` first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel

from host.errors import NotInitializedError
from protocol.dispatch import Router

__all__ = ["ShellTable"]

P = TypeVar("P", bound=BaseModel)


class ShellTable:
    """Adds shell methods to a router, each guarded by the handshake unless `needs_init=False`."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self.initialized = False

    def add(
        self,
        name: str,
        params_model: type[P],
        handler: Callable[[P], Awaitable[BaseModel | None]],
        *,
        needs_init: bool = True,
    ) -> None:
        async def guarded(p: P) -> BaseModel | None:
            if needs_init and not self.initialized:
                raise NotInitializedError(f"call initialize before {name}")
            return await handler(p)

        self.router.add(name, params_model, guarded)
