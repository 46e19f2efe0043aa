"""`describe_validation_error`: what a person reads when params are wrong says what would be right, never the value."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from protocol.errors import describe_validation_error


class _Server(BaseModel):
    name: str = Field(pattern=r"^[a-z0-9-]{1,40}$")
    token: str = Field(max_length=8)
    port: int = Field(ge=1)


def _described(raw: dict[str, object]) -> str:
    with pytest.raises(ValidationError) as caught:
        _Server.model_validate(raw)
    return describe_validation_error(caught.value)


def test_each_wrong_field_says_what_it_must_be_beside_its_error_type() -> None:
    said = _described({"name": "Bad_Name", "token": "sk-live-0123456789", "port": 0})
    assert said == (
        "Invalid params (name: must match ^[a-z0-9-]{1,40}$ (string_pattern_mismatch); "
        "token: must be at most 8 characters (string_too_long); port: must be at least 1 (greater_than_equal))"
    )
    assert "sk-live" not in said and "Bad_Name" not in said, "the input's value is never repeated"


def test_a_missing_field_and_an_unknown_error_type_are_still_named() -> None:
    assert _described({"token": "x", "port": 1}) == "Invalid params (name: is required (missing))"
    assert "port: must be an integer (int_parsing)" in _described({"name": "a", "token": "x", "port": "many"})
