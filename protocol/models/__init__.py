"""protocol.models: the wire models, one module per method family (`agents`, `memory`, `works`, ...).
A new method's `<Method>Params` / `<Method>Result` go in its family's module, derived from the bases here.

Every model derives from `WireModel` (camelCase on the wire) or `Params` (unknown fields refused).
"""

from protocol.models.base import Empty, EmptyParams, Params, WireModel

__all__ = ["Empty", "EmptyParams", "Params", "WireModel"]
