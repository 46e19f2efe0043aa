"""JSON Schema export of the whole wire, for shells written in other languages (`hearth schema`)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from protocol.models.host import PROTOCOL_VERSION
from protocol.models.transcript import TRANSCRIPT_EVENT
from protocol.registry import HOST_EVENTS, HOST_METHODS, HOST_TOOLS, KERNEL_CALLS, KERNEL_EVENTS, KERNEL_METHODS

__all__ = ["build_schema", "schema_json"]


def build_schema() -> dict[str, Any]:
    """One document: `$defs` for every model, and for each method and event a `$ref` to its models."""
    models: set[type[BaseModel]] = set()
    for methods in (HOST_METHODS, KERNEL_METHODS, KERNEL_CALLS):
        for params, result in methods.values():
            models.update((params, result))
    for events in (HOST_EVENTS, KERNEL_EVENTS):
        models.update(events.values())
    models.update(HOST_TOOLS.values())
    ordered = sorted(models, key=lambda m: m.__name__)
    refs, document = models_json_schema([(model, "serialization") for model in ordered], ref_template="#/$defs/{model}")

    def ref(model: Any) -> Any:
        return refs[(model, "serialization")]

    def methods_section(methods: dict[str, Any]) -> dict[str, Any]:
        return {name: {"params": ref(p), "result": ref(r)} for name, (p, r) in methods.items()}

    transcript = TRANSCRIPT_EVENT.json_schema(ref_template="#/$defs/{model}")
    defs = {**transcript.pop("$defs", {}), **document.get("$defs", {})}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Hearth wire protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "host": {"methods": methods_section(HOST_METHODS), "events": {n: ref(m) for n, m in HOST_EVENTS.items()}},
        "kernel": {
            "methods": methods_section(KERNEL_METHODS),
            "events": {n: ref(m) for n, m in KERNEL_EVENTS.items()},
            "calls": methods_section(KERNEL_CALLS),
        },
        "tools": {name: {"arguments": ref(model)} for name, model in HOST_TOOLS.items()},
        "transcriptEvent": transcript,
        "$defs": defs,
    }


def schema_json() -> str:
    return json.dumps(build_schema(), indent=2, sort_keys=True) + "\n"
