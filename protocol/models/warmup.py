"""Loading a local model ahead of the first message, and telling the shells while it loads.

The host asks the kernel to `model.warm` an agent's embedded model as soon as the agent exists (and after
each kernel start), and announces `model.status` (`loading`, then `ready` or `failed`) to every shell, so a
first message neither waits in silence nor pays for the load when it was warmed in time.
"""

from __future__ import annotations

from typing import Literal

from protocol.models.base import Params, WireModel
from protocol.models.kernel import ModelSpec

__all__ = ["ModelStatusEvent", "ModelWarmParams", "ModelWarmResult"]


class ModelWarmParams(Params):
    model: ModelSpec


class ModelWarmResult(WireModel):
    loaded: bool
    """True when this call loaded the model; false when it was loaded already or needs no loading."""


class ModelStatusEvent(WireModel):
    """An embedded model is loading, is ready, or failed to load (with the fix in `error`)."""

    provider: str
    name: str = ""
    state: Literal["loading", "ready", "failed"]
    seconds: float | None = None
    error: str | None = None
