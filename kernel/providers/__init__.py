"""kernel.providers: the model seam (`Provider`) and the providers behind it, chosen by `open_provider`.
A new provider is a module here, named in `registry.py`'s `PROVIDERS`; what remote ones share is in `_common`.
"""

from kernel.providers.base import (
    Message,
    ModelConfig,
    ModelEvent,
    ModelRequest,
    Provider,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolDefinition,
    Usage,
    UsageReport,
)
from kernel.providers.clients import ClientPool
from kernel.providers.registry import PROVIDERS, open_provider

__all__ = [
    "PROVIDERS",
    "ClientPool",
    "Message",
    "ModelConfig",
    "ModelEvent",
    "ModelRequest",
    "Provider",
    "StreamEnd",
    "TextDelta",
    "ToolCall",
    "ToolCallReady",
    "ToolDefinition",
    "Usage",
    "UsageReport",
    "open_provider",
]
