"""Wire models for `secrets.set` / `secrets.list` / `secrets.delete`, and the rule for which models need a key.

A secret's value travels one way only, shell to host, inside `SecretsSetParams`: it is hidden from
`repr`, and a validation error never quotes it. Results carry names, never values.
`provider_needs_key` is shared by the host (which resolves keys) and the kernel (which refuses to call
a keyed provider without one), so both sides apply the same rule.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, SecretStr, field_serializer

from protocol.ids import SECRET_NAME_PATTERN
from protocol.models.base import Empty, EmptyParams, Params, WireModel

__all__ = [
    "MAX_SECRET_CHARS",
    "KEYED_PROVIDERS",
    "SecretName",
    "SecretsSetParams",
    "SecretsSetResult",
    "SecretsListResult",
    "SecretsDeleteParams",
    "SECRETS_METHODS",
    "provider_needs_key",
    "is_loopback_url",
]

"""A secret name: a lowercase slug such as `openai`, `deepseek` or `work-anthropic`."""

MAX_SECRET_CHARS = 16 * 1024
"""API keys are short; anything larger is a paste gone wrong."""

KEYED_PROVIDERS = frozenset({"openai", "anthropic"})
"""Providers that speak to a remote API and so normally need a key."""

SecretName = Annotated[str, Field(pattern=SECRET_NAME_PATTERN)]


class SecretsSetParams(Params):
    """Store `value` under `name`, replacing any earlier value."""

    # A bad value must not be quoted back in a validation error or a log line.
    model_config = ConfigDict(hide_input_in_errors=True)

    name: SecretName
    value: SecretStr = Field(min_length=1, max_length=MAX_SECRET_CHARS, json_schema_extra={"writeOnly": True})

    @field_serializer("value")
    def _reveal_for_the_wire(self, value: SecretStr) -> str:
        # Only a sending shell serialises these params; the host never dumps them.
        return value.get_secret_value()


class SecretsSetResult(WireModel):
    name: str
    replaced: bool


class SecretsListResult(WireModel):
    names: list[str]


class SecretsDeleteParams(Params):
    name: SecretName


SECRETS_METHODS: dict[str, tuple[type[Params], type[WireModel]]] = {
    "secrets.set": (SecretsSetParams, SecretsSetResult),
    "secrets.list": (EmptyParams, SecretsListResult),
    "secrets.delete": (SecretsDeleteParams, Empty),
}
"""Method name → (params model, result model), for the schema export and the golden tests."""


def is_loopback_url(url: str | None) -> bool:
    """Whether `url` names this machine (`localhost`, 127.0.0.0/8, ::1).

    Args:
        url: a base URL such as `http://127.0.0.1:11434/v1`, or None.

    Returns:
        True only for a URL whose host is a loopback name or address.
    """
    if not url:
        return False
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def provider_needs_key(provider: str, base_url: str | None) -> bool:
    """Whether a model of `provider` at `base_url` needs an API key before it can be called.

    The rule: a remote API (`openai`, `anthropic`) needs a key unless its `baseUrl` is a loopback
    address, where local servers (Ollama, llama.cpp server, vLLM) usually run without one. The
    embedded and scripted models never need one. A keyless server elsewhere on the network can be
    given any placeholder value as its key.

    Args:
        provider: the model's provider name.
        base_url: the model's `baseUrl`, or None for the provider's public API.

    Returns:
        True when a call without a key must be refused before it is made.
    """
    return provider in KEYED_PROVIDERS and not is_loopback_url(base_url)
