"""protocol.models: the wire models, one module per method family (`agents`, `memory`, `works`, ...).

A new method's `<Method>Params` / `<Method>Result` go in its family's module; every model derives from the
bases exported here (camelCase on the wire, unknown fields refused in params).
"""

from protocol.models.base import Empty, EmptyParams, Params, WireModel

__all__ = ["Empty", "EmptyParams", "Params", "WireModel"]
