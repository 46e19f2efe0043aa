"""The memory.* methods through the router: results on the wire, error codes, events, golden messages."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from host.memory import Evidence, MemoryEvent
from host.memory.hub import MemoryHub
from host.rpc.memory import MEMORY_EVENTS, MEMORY_METHODS, memory_notification, register_memory_methods
from protocol.dispatch import Router
from protocol.errors import INVALID_PARAMS, NOT_FOUND, SENSITIVE_CONTENT

GOLDEN = Path(__file__).parents[3] / "tests" / "protocol" / "golden"


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[MemoryHub]:
    (tmp_path / "agents" / "ada").mkdir(parents=True)
    opened = MemoryHub(tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def router(hub: MemoryHub) -> Router:
    routes = Router()
    register_memory_methods(routes, hub)
    return routes


def call(router: Router, method: str, **params: Any) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = asyncio.run(router.dispatch(request))
    assert isinstance(response, dict)
    return response


def test_every_memory_method_is_registered(router: Router) -> None:
    assert set(MEMORY_METHODS) <= set(router.names())


def test_a_persons_note_is_listed_searched_and_verified(router: Router) -> None:
    noted = call(router, "memory.note", agentId="ada", text="User lives in Lisbon", key="user.home_city")["result"]
    assert noted["outcome"] == "recorded" and noted["record"]["source"] == "human"
    record_id = noted["record"]["id"]
    listed = call(router, "memory.list", agentId="ada", view="current")["result"]
    assert [(r["id"], r["text"], r["trust"], r["status"]) for r in listed["records"]] == [
        (record_id, "User lives in Lisbon", "confirmed", "live")
    ]
    hits = call(router, "memory.search", agentId="ada", query="Lisbon")["result"]["hits"]
    assert [h["record"]["id"] for h in hits] == [record_id]
    assert call(router, "memory.verify", agentId="ada")["result"]["ok"] is True


def test_review_retract_erase_and_history_through_the_wire(router: Router, hub: MemoryHub) -> None:
    proposal = asyncio.run(hub.get("ada").note("Acme's CEO is Bob", evidence=Evidence("peer:bob")))
    assert proposal.fact is not None
    queue = call(router, "memory.list", agentId="ada", view="proposed")["result"]["records"]
    assert [r["id"] for r in queue] == [proposal.fact.id]
    reviewed = call(router, "memory.review", agentId="ada", recordId=proposal.fact.id, decision="confirm")["result"]
    assert reviewed["outcome"] == "confirmed" and reviewed["record"]["trust"] == "confirmed"
    retracted = call(router, "memory.retract", agentId="ada", recordId=proposal.fact.id, reason="left Acme")["result"]
    assert retracted["outcome"] == "retracted"
    assert [r["id"] for r in call(router, "memory.list", agentId="ada", view="retracted")["result"]["records"]] == [
        proposal.fact.id
    ]
    erased = call(router, "memory.erase", agentId="ada", recordId=proposal.fact.id)["result"]
    assert erased["outcome"] == "erased" and erased["record"]["erased"] is True and erased["record"]["text"] is None
    trail = call(router, "memory.history", agentId="ada", recordId=proposal.fact.id)["result"]["records"]
    assert [(r["op"], r["source"]) for r in trail] == [
        ("assert", "peer:bob"),
        ("review", "human"),
        ("retract", "human"),
        ("erase", "human"),
    ]
    assert trail[0]["erased"] is True and trail[0]["text"] is None
    assert call(router, "memory.verify", agentId="ada")["result"]["ok"] is True


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("memory.list", {"agentId": "nobody"}, NOT_FOUND),
        ("memory.note", {"agentId": "ada", "text": "my password is hunter2hunter"}, SENSITIVE_CONTENT),
        ("memory.retract", {"agentId": "ada", "recordId": "m-000000000000"}, NOT_FOUND),
        ("memory.retract", {"agentId": "ada", "recordId": "not-an-id"}, INVALID_PARAMS),
        ("memory.list", {"agentId": "ada", "asOf": "last spring"}, INVALID_PARAMS),
        ("memory.list", {"agentId": "ada", "view": "everything"}, INVALID_PARAMS),
        ("memory.review", {"agentId": "ada", "recordId": "m-000000000000", "decision": "maybe"}, INVALID_PARAMS),
        ("memory.note", {"agentId": "ada", "text": "x", "extra": 1}, INVALID_PARAMS),
    ],
)
def test_errors_carry_their_codes(router: Router, method: str, params: dict[str, Any], code: int) -> None:
    response = call(router, method, **params)
    assert response["error"]["code"] == code
    assert "hunter2" not in json.dumps(response)


def test_change_notices_become_memory_changed_and_memory_proposed_events(hub: MemoryHub) -> None:
    proposal = asyncio.run(hub.get("ada").note("Acme's CEO is Bob", evidence=Evidence("peer:bob")))
    assert proposal.fact is not None
    method, event = memory_notification(MemoryEvent("changed", "ada", "retract", ("m-000000000001",), True))
    assert method == "memory.changed"
    assert event.model_dump(by_alias=True) == {
        "agentId": "ada",
        "op": "retract",
        "recordIds": ["m-000000000001"],
        "epochBumped": True,
    }
    method, event = memory_notification(
        MemoryEvent("proposed", "ada", "assert", (proposal.fact.id,), False, (proposal.fact,))
    )
    assert method == "memory.proposed"
    assert event.model_dump(mode="json", by_alias=True)["records"][0]["text"] == "Acme's CEO is Bob"


def golden_names() -> list[str]:
    names = [f"{m}.{kind}" for m in MEMORY_METHODS for kind in ("params", "result")]
    return names + [f"{e}.event" for e in MEMORY_EVENTS]


@pytest.mark.parametrize("name", golden_names())
def test_each_memory_message_has_a_golden_file_that_round_trips(name: str) -> None:
    stem, kind = name.rsplit(".", 1)
    model = MEMORY_EVENTS[stem] if kind == "event" else MEMORY_METHODS[stem][0 if kind == "params" else 1]
    data = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert model.model_validate(data).model_dump(mode="json", by_alias=True, exclude_unset=True) == data
