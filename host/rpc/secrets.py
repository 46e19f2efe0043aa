"""The `secrets.*` methods a shell calls: set a provider key, list the names, delete one.

Values go in and never come out: `secrets.set` answers with the name and whether it replaced a value,
`secrets.list` with names only. Errors are the store's typed errors, so a shell sees their codes.
"""

from __future__ import annotations

import asyncio

from host.store.secrets import SecretStore
from protocol.dispatch import MethodTable
from protocol.models.base import EmptyParams
from protocol.models.secrets import (
    SECRETS_METHODS,
    SecretsDeleteParams,
    SecretsListResult,
    SecretsSetParams,
    SecretsSetResult,
)

__all__ = ["SECRETS_METHODS", "register_secrets_methods"]


def register_secrets_methods(router: MethodTable, store: SecretStore) -> None:
    """Add `secrets.set`, `secrets.list` and `secrets.delete` to `router`, backed by `store`.

    Args:
        router: the host's request router.
        store: where the secrets live.
    """

    # The store fsyncs on every write; a worker thread keeps the host's event loop free meanwhile.
    async def set_secret(params: SecretsSetParams) -> SecretsSetResult:
        replaced = await asyncio.to_thread(store.set, params.name, params.value.get_secret_value())
        return SecretsSetResult(name=params.name, replaced=replaced)

    async def list_secrets(params: EmptyParams) -> SecretsListResult:
        return SecretsListResult(names=await asyncio.to_thread(store.list))

    async def delete_secret(params: SecretsDeleteParams) -> None:
        await asyncio.to_thread(store.delete, params.name)

    router.add("secrets.set", SecretsSetParams, set_secret)
    router.add("secrets.list", EmptyParams, list_secrets)
    router.add("secrets.delete", SecretsDeleteParams, delete_secret)
