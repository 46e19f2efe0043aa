"""Warming the embedded model: load it in the kernel before the first message, and say so to the shells.

An agent on the local model is warmed when it is created or switched to that model, and every such agent
after each kernel start (a new kernel has nothing loaded). One warm-up runs at a time, and each model
(provider, name, context window) is warmed once per kernel. The shells hear `model.status`: `loading`,
then `ready` with the seconds it took, or `failed` with the error (which says how to fix it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from host.errors import KernelUnavailableError
from host.runs.scheduler import Notify
from host.store.agents import Agent, AgentStore
from host.supervisor import KernelSupervisor
from protocol.errors import JsonRpcError
from protocol.models.kernel import ModelSpec
from protocol.models.warmup import ModelStatusEvent, ModelWarmParams, ModelWarmResult

__all__ = ["ModelWarmup"]

logger = logging.getLogger(__name__)

WARM_TIMEOUT = 300.0


class ModelWarmup:
    """Args:
    store: the agents (to find those on the local model).
    kernel: where models are loaded.
    resolve: an agent's model spec, as its turns would get it.
    notify: sends events to the shells.
    """

    def __init__(
        self,
        store: AgentStore,
        kernel: KernelSupervisor,
        resolve: Callable[[Agent], ModelSpec],
        notify: Notify,
    ) -> None:
        self._store = store
        self._kernel = kernel
        self._resolve = resolve
        self._notify = notify
        self._queue: asyncio.Queue[ModelSpec] = asyncio.Queue()
        self._warmed: set[tuple[str, str, int]] = set()

    def agent_changed(self, agent: Agent) -> None:
        """Warm `agent`'s model if it is the embedded one."""
        if agent.settings.model.provider == "local":
            try:
                self._queue.put_nowait(self._resolve(agent))
            except JsonRpcError as exc:
                logger.warning("cannot warm %s's model: %s", agent.agent_id, exc.message)

    def kernel_started(self) -> None:
        """A new kernel has nothing loaded: warm every agent's embedded model again."""
        self._warmed.clear()
        for agent in self._store.list():
            self.agent_changed(agent)

    async def serve(self) -> None:
        """Warm queued models one at a time, until cancelled."""
        while True:
            spec = await self._queue.get()
            key = (spec.provider, spec.name, spec.context_window)
            # A kernel that is not up has nothing to warm: `kernel_started` queues every model again.
            if key in self._warmed or not await self._kernel.wait_up(WARM_TIMEOUT):
                continue
            await self._warm(spec, key)

    async def _warm(self, spec: ModelSpec, key: tuple[str, str, int]) -> None:
        await self._notify("model.status", ModelStatusEvent(provider=spec.provider, name=spec.name, state="loading"))
        started = time.monotonic()
        try:
            await self._kernel.request("model.warm", ModelWarmParams(model=spec), ModelWarmResult, timeout=WARM_TIMEOUT)
        except KernelUnavailableError:
            logger.info("the kernel went away while loading the %s model; it loads again on restart", spec.provider)
            return
        except JsonRpcError as exc:
            logger.warning("the %s model could not be loaded: %s", spec.provider, exc.message)
            failed = ModelStatusEvent(provider=spec.provider, name=spec.name, state="failed", error=exc.message)
            await self._notify("model.status", failed)
            return
        self._warmed.add(key)
        seconds = round(time.monotonic() - started, 2)
        ready = ModelStatusEvent(provider=spec.provider, name=spec.name, state="ready", seconds=seconds)
        await self._notify("model.status", ready)
