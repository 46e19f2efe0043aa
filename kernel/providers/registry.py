"""Provider selection: `ModelConfig.provider` → the class that speaks to that model.

Imports are lazy so the kernel starts without loading SDKs a user has not chosen.
"""

from __future__ import annotations

import importlib

from kernel.errors import BadModelConfigError
from kernel.providers.base import ModelConfig, Provider

__all__ = ["PROVIDERS", "open_provider"]

PROVIDERS: dict[str, str] = {
    "scripted": "kernel.providers.scripted:ScriptedProvider",
    "openai": "kernel.providers.openai_compat:OpenAICompatProvider",
    "anthropic": "kernel.providers.anthropic:AnthropicProvider",
    "local": "kernel.providers.local:LocalProvider",
}


def open_provider(config: ModelConfig) -> Provider:
    """Build the provider named by `config.provider`.

    Raises:
        BadModelConfigError: the provider name is unknown.
    """
    target = PROVIDERS.get(config.provider)
    if target is None:
        known = ", ".join(sorted(PROVIDERS))
        raise BadModelConfigError(f"unknown model provider {config.provider!r} (known: {known})")
    module_name, _, class_name = target.partition(":")
    provider_class = getattr(importlib.import_module(module_name), class_name)
    provider: Provider = provider_class(config)
    return provider
