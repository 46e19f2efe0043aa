"""Provider selection: `ModelConfig.provider` → the class that speaks to that model.

Imports are lazy so the kernel starts without loading SDKs a user has not chosen. Remote providers take
their SDK client from the kernel's `ClientPool`, so calls with one configuration share one client.
"""

from __future__ import annotations

import importlib

from kernel.errors import BadModelConfigError
from kernel.providers.base import ModelConfig, Provider
from kernel.providers.clients import ClientPool

__all__ = ["PROVIDERS", "open_provider"]

PROVIDERS: dict[str, str] = {
    "scripted": "kernel.providers.scripted:ScriptedProvider",
    "openai": "kernel.providers.openai_compat:OpenAICompatProvider",
    "anthropic": "kernel.providers.anthropic:AnthropicProvider",
    "local": "kernel.providers.local:LocalProvider",
}


def open_provider(config: ModelConfig, *, clients: ClientPool | None = None) -> Provider:
    """Build the provider named by `config.provider`.

    Args:
        config: the model to call.
        clients: the pool a remote provider takes its SDK client from (without one, each call builds its own).

    Raises:
        BadModelConfigError: the provider name is unknown.
    """
    target = PROVIDERS.get(config.provider)
    if target is None:
        known = ", ".join(sorted(PROVIDERS))
        raise BadModelConfigError(f"unknown model provider {config.provider!r} (known: {known})")
    module_name, _, class_name = target.partition(":")
    provider_class = getattr(importlib.import_module(module_name), class_name)
    if clients is not None and getattr(provider_class, "SHARES_CLIENTS", False):
        shared: Provider = provider_class(config, clients=clients)
        return shared
    provider: Provider = provider_class(config)
    return provider
