"""`secrets.*` over the real router: values go in, never come out; golden messages round-trip."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from host.rpc.secrets import SECRETS_METHODS, register_secrets_methods
from host.store.secrets import SecretStore
from protocol.dispatch import Router
from protocol.errors import INVALID_PARAMS, NOT_FOUND
from protocol.models.secrets import SecretsSetParams

VALUE = "sk-proj-TOPSECRET-0123456789"
# Kept beside the flat golden set until `protocol/registry.py` lists the secrets methods.
GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "protocol" / "golden"


def make_router(tmp_path: Path) -> tuple[Router, SecretStore]:
    router = Router()
    store = SecretStore(tmp_path)
    register_secrets_methods(router, store)
    return router, store


def call(router: Router, method: str, params: Any, request_id: int = 1) -> dict[str, Any]:
    async def go() -> Any:
        async with asyncio.timeout(5):
            return await router.dispatch({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    response = asyncio.run(go())
    assert isinstance(response, dict)
    return response


def test_set_then_list_gives_the_name_and_no_response_carries_the_value(tmp_path: Path) -> None:
    router, store = make_router(tmp_path)
    responses = [
        call(router, "secrets.set", {"name": "openai", "value": VALUE}),
        call(router, "secrets.set", {"name": "openai", "value": VALUE}),
        call(router, "secrets.list", {}),
    ]
    assert responses[0]["result"] == {"name": "openai", "replaced": False}
    assert responses[1]["result"] == {"name": "openai", "replaced": True}
    assert responses[2]["result"] == {"names": ["openai"]}
    assert VALUE not in json.dumps(responses)
    assert store.get("openai") == VALUE


def test_delete_removes_the_secret_and_keeps_the_others(tmp_path: Path) -> None:
    router, store = make_router(tmp_path)
    call(router, "secrets.set", {"name": "openai", "value": VALUE})
    call(router, "secrets.set", {"name": "anthropic", "value": "sk-ant-other"})
    assert call(router, "secrets.delete", {"name": "openai"})["result"] == {}
    assert call(router, "secrets.list", {})["result"] == {"names": ["anthropic"]}
    assert store.get("anthropic") == "sk-ant-other"


def test_deleting_an_unknown_secret_is_not_found(tmp_path: Path) -> None:
    router, _ = make_router(tmp_path)
    assert call(router, "secrets.delete", {"name": "openai"})["error"]["code"] == NOT_FOUND


@pytest.mark.parametrize(
    "params",
    [
        {"name": "Not A Slug", "value": VALUE},
        {"name": "openai", "value": VALUE, "extra": VALUE},
        {"name": "openai", "value": ""},
        {"name": VALUE.lower(), "value": 42},
        {"value": VALUE},
    ],
)
def test_bad_params_are_invalid_and_the_error_never_echoes_the_value(tmp_path: Path, params: dict[str, Any]) -> None:
    router, store = make_router(tmp_path)
    response = call(router, "secrets.set", params)
    assert response["error"]["code"] == INVALID_PARAMS
    assert VALUE not in json.dumps(response)
    assert VALUE.lower() not in json.dumps(response)
    assert store.list() == []


def test_the_params_repr_hides_the_value() -> None:
    params = SecretsSetParams.model_validate({"name": "openai", "value": VALUE})
    assert VALUE not in repr(params)
    assert VALUE not in str(params)


def test_every_secrets_method_is_registered_and_listed_for_the_schema(tmp_path: Path) -> None:
    router, _ = make_router(tmp_path)
    assert sorted(SECRETS_METHODS) == ["secrets.delete", "secrets.list", "secrets.set"]
    assert set(SECRETS_METHODS) <= set(router.names())


@pytest.mark.parametrize("method", sorted(SECRETS_METHODS))
@pytest.mark.parametrize("part", ["params", "result"])
def test_golden_messages_round_trip(method: str, part: str) -> None:
    path = GOLDEN / f"{method}.{part}.json"
    golden = json.loads(path.read_text(encoding="utf-8"))
    params_model, result_model = SECRETS_METHODS[method]
    model = params_model if part == "params" else result_model
    assert model.model_validate(golden).model_dump(mode="json", by_alias=True) == golden
