"""What the remote providers share: the key check before a call, the names used in messages, tool-argument
parsing, Retry-After and the translation of transport and SDK errors into `Failure`s.

Usage convention for every provider: `Usage.input_tokens` counts every prompt token, cached or not;
`cached_input_tokens` is the part served from the provider's prompt cache and `cache_write_tokens` the
part written to it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import httpx2

from kernel.errors import BadModelConfigError, ProviderError
from kernel.providers.base import ModelConfig
from kernel.providers.retry import CallInfo, Failure
from protocol.models.secrets import provider_needs_key

__all__ = [
    "KEYLESS_PLACEHOLDER",
    "call_info",
    "require_api_key",
    "require_model_name",
    "parse_tool_arguments",
    "retry_after_seconds",
    "map_transport_errors",
    "map_sdk_errors",
    "error_detail",
    "json_bytes",
]

KEYLESS_PLACEHOLDER = "no-key"
"""Sent to a loopback server that needs no key: the SDKs insist on some string, and an explicit one keeps
them from reading keys out of the environment."""


def call_info(config: ModelConfig, default_base_url: str) -> CallInfo:
    """Names for error messages: the provider (with its host when it is not the default), model, secret."""
    base_url = config.base_url or default_base_url
    label = config.provider
    if config.base_url:
        label = f"{config.provider} ({urlsplit(config.base_url).netloc or config.base_url})"
    secret_name = str(config.options.get("secret_name") or config.provider)
    return CallInfo(label, config.name, secret_name, base_url, config.api_key)


def require_api_key(config: ModelConfig) -> str:
    """The key to send, checked before any call is made.

    A key is needed unless `config.base_url` is a loopback address (see `provider_needs_key`); a loopback
    server without one gets `KEYLESS_PLACEHOLDER`.

    Raises:
        ProviderError: the provider needs a key and `config.api_key` is empty (the message says how to add one).
    """
    if config.api_key:
        return config.api_key
    if provider_needs_key(config.provider, config.base_url):
        secret = str(config.options.get("secret_name") or config.provider)
        raise ProviderError(
            f"no API key for {config.provider}: run `hearth secrets set {secret}` or set one in the desktop's settings"
        )
    return KEYLESS_PLACEHOLDER


def require_model_name(config: ModelConfig) -> str:
    """Raises: BadModelConfigError: the model has no name (remote APIs need one)."""
    if not config.name:
        raise BadModelConfigError(f"the {config.provider} model has no name; set one in the agent's model settings")
    return config.name


def parse_tool_arguments(tool_name: str, raw: str) -> dict[str, Any]:
    """The arguments of a streamed tool call, assembled from its fragments; empty means no arguments.

    Raises:
        Failure: the text is not a JSON object (kind `bad_tool_arguments`).
    """
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise Failure("bad_tool_arguments", detail=f"{tool_name}: {exc}") from None
    if not isinstance(value, dict):
        raise Failure("bad_tool_arguments", detail=f"{tool_name}: expected a JSON object, got {type(value).__name__}")
    return value


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `retry-after` as seconds or a date), or None."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def json_bytes(value: Any) -> bytes:
    """`value` as compact, strict JSON in UTF-8: what a request body is posted as."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def error_detail(body: object, fallback: str) -> str:
    """The provider's own message from an error body (`{"error": {"message"}}` or `{"message"}`)."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


@contextmanager
def map_transport_errors() -> Iterator[None]:
    """Translate errors below the SDKs (a broken connection, a chunk that is not JSON) into `Failure`s."""
    try:
        yield
    except httpx2.TimeoutException:
        raise Failure("timeout") from None
    except httpx2.TransportError as exc:
        raise Failure("connection", detail=type(exc).__name__ + (f": {exc}" if str(exc) else "")) from None
    except json.JSONDecodeError as exc:
        raise Failure("malformed", detail=f"a chunk was not valid JSON ({exc.msg})") from None


@contextmanager
def map_sdk_errors(sdk: ModuleType, status_failure: Callable[[Any], Failure]) -> Iterator[None]:
    """Translate an official SDK's exceptions (and the transport's below them) into `Failure`s.

    The `openai` and `anthropic` SDKs are generated from one template and name their errors alike: a status
    error becomes `status_failure(exc)`, a timeout, a connection failure and any other API error their kinds.
    """
    try:
        with map_transport_errors():
            yield
    except sdk.APIStatusError as exc:
        raise status_failure(exc) from None
    except sdk.APITimeoutError:
        raise Failure("timeout") from None
    except sdk.APIConnectionError as exc:
        cause = exc.__cause__
        raise Failure("connection", detail=f"{type(cause).__name__}: {cause}" if cause else exc.message) from None
    except sdk.APIError as exc:
        # An error object inside an otherwise healthy stream.
        raise Failure("provider_error", detail=error_detail(exc.body, exc.message)) from None
