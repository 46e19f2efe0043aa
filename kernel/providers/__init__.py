"""kernel.providers: the model seam (`Provider`) and the providers behind it, chosen by `open_provider`."""

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
