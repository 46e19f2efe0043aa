"""Provider SDK clients are reused per configuration and closed at the end (issue 10, item 16).

Two calls with one configuration share one client and its kept-alive connection; a changed key or base
URL gets its own client (and the new key is what the server sees); closing the pool closes them all.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai

from kernel.providers.base import Message, ModelConfig, ModelRequest
from kernel.providers.clients import ClientKey, ClientPool
from kernel.providers.openai_compat import OpenAICompatProvider
from kernel.providers.registry import open_provider
from tests.kernel.providers.fake_llm_server import FakeModelServer
from tests.kernel.providers.streaming import collect, text_of
from tests.support.fake_model import say

KEY = "sk-test-0123456789abcdef-first"
OTHER_KEY = "sk-test-0123456789abcdef-second"


def _config(server: FakeModelServer, **overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {"provider": "openai", "name": "gpt-test", "base_url": server.url + "/v1", "api_key": KEY}
    values.update(overrides)
    return ModelConfig(**values)


def _request(config: ModelConfig) -> ModelRequest:
    return ModelRequest(config, (Message("user", "hi"),), ())


async def _call(pool: ClientPool | None, config: ModelConfig) -> str:
    # A provider per call, as the kernel builds one per turn: only the pool is shared.
    provider = open_provider(config, clients=pool) if pool is not None else OpenAICompatProvider(config)
    return text_of(await collect(provider, _request(config), []))


def test_two_calls_with_one_configuration_share_one_client_and_its_connection(model_server: FakeModelServer) -> None:
    async def main() -> None:
        pool = ClientPool()
        model_server.script(say("one"), say("two"))
        assert await _call(pool, _config(model_server)) == "one"
        assert await _call(pool, _config(model_server)) == "two"
        assert len(pool) == 1
        await pool.aclose()

    asyncio.run(main())
    first, second = model_server.requests
    assert first.port == second.port  # the second call rode the first call's kept-alive connection


def test_without_a_pool_each_call_builds_and_closes_its_own_client(model_server: FakeModelServer) -> None:
    async def main() -> None:
        model_server.script(say("one"), say("two"))
        assert await _call(None, _config(model_server)) == "one"
        assert await _call(None, _config(model_server)) == "two"

    asyncio.run(main())
    first, second = model_server.requests
    assert first.port != second.port


def test_a_changed_key_or_base_url_gets_its_own_client(model_server: FakeModelServer) -> None:
    async def main() -> None:
        pool = ClientPool()
        model_server.script(say("a"), say("b"), say("c"), say("d"))
        await _call(pool, _config(model_server))
        await _call(pool, _config(model_server, api_key=OTHER_KEY))
        await _call(pool, _config(model_server, base_url=model_server.url + "/v1/"))
        await _call(pool, _config(model_server, api_key=OTHER_KEY))
        assert len(pool) == 3
        await pool.aclose()

    asyncio.run(main())
    keys = [r.headers["authorization"] for r in model_server.requests]
    assert keys == [f"Bearer {KEY}", f"Bearer {OTHER_KEY}", f"Bearer {KEY}", f"Bearer {OTHER_KEY}"]


def test_closing_the_pool_closes_every_client() -> None:
    async def main() -> None:
        pool = ClientPool()

        def build(url: str) -> openai.AsyncOpenAI:
            key = ClientKey("openai", url, KEY, 300.0, 10.0)
            return pool.get(key, lambda: openai.AsyncOpenAI(api_key=KEY, base_url=url))

        built = [build("http://127.0.0.1:1/v1"), build("http://127.0.0.1:2/v1")]
        assert pool.get(ClientKey("openai", "http://127.0.0.1:1/v1", KEY, 300.0, 10.0), lambda: built[1]) is built[0]
        await pool.aclose()
        assert len(pool) == 0
        assert all(client.is_closed() for client in built)

    asyncio.run(main())


def test_providers_without_an_sdk_client_ignore_the_pool() -> None:
    pool = ClientPool()
    provider = open_provider(ModelConfig(provider="scripted", name="s"), clients=pool)
    assert type(provider).__name__ == "ScriptedProvider" and len(pool) == 0
