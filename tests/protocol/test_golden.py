"""Golden wire messages: every method and event has an example, and each one round-trips unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol.registry import all_messages

GOLDEN = Path(__file__).parent / "golden"


def _stems() -> list[str]:
    return sorted(path.name.removesuffix(".json") for path in GOLDEN.glob("*.json"))


def test_every_message_has_a_golden_file_and_every_golden_file_a_message() -> None:
    assert sorted(all_messages()) == _stems()


@pytest.mark.parametrize("stem", _stems())
def test_golden_message_round_trips(stem: str) -> None:
    value = json.loads((GOLDEN / f"{stem}.json").read_text(encoding="utf-8"))
    model = all_messages()[stem].model_validate(value)
    assert model.model_dump(mode="json", by_alias=True, exclude_unset=True) == value
    again = type(model).model_validate_json(model.model_dump_json(by_alias=True))
    assert again == model
