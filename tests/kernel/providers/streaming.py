"""Driving a provider's stream in the provider tests: collect its events, or the error it ends with."""

from __future__ import annotations

import asyncio

import pytest

from kernel.errors import ProviderError
from kernel.providers.base import ModelEvent, ModelRequest, Provider, TextDelta


async def collect(provider: Provider, req: ModelRequest, into: list[ModelEvent]) -> list[ModelEvent]:
    async with asyncio.timeout(10):
        async for event in provider.stream(req):
            into.append(event)
    return into


def run(provider: Provider, req: ModelRequest) -> list[ModelEvent]:
    return asyncio.run(collect(provider, req, []))


def run_failing(provider: Provider, req: ModelRequest) -> tuple[list[ModelEvent], ProviderError]:
    """The events streamed before the failure, and the failure."""
    events: list[ModelEvent] = []
    with pytest.raises(ProviderError) as caught:
        asyncio.run(collect(provider, req, events))
    return events, caught.value


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))
