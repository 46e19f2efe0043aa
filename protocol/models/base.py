"""The one base for every wire model: camelCase on the wire, snake_case in Python.

`WireModel` ignores unknown fields so an older peer can read a newer message; `Params` forbids them,
so a typo in a request is an INVALID_PARAMS error instead of a silently ignored field, and is strict: no
bool for a number, no string for an int (JSON's int still stands for a float). The dispatcher validates
inbound params with `strict=True` too, so the models nested in params are held to the same rule.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["WireModel", "Params", "Empty", "EmptyParams"]


class WireModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="ignore",
    )


class Params(WireModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Empty(WireModel):
    """A result with nothing to say."""


class EmptyParams(Params):
    """A method that takes no params."""
