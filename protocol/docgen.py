"""`docs/protocol.md`, generated from the wire models so the document cannot drift from the code."""

from __future__ import annotations

import re
from typing import Any, get_origin

from pydantic import BaseModel

from protocol.models.host import PROTOCOL_VERSION
from protocol.registry import HOST_EVENTS, HOST_METHODS, HOST_TOOLS, KERNEL_CALLS, KERNEL_EVENTS, KERNEL_METHODS

__all__ = ["render_protocol_markdown"]


def _type_name(annotation: Any) -> str:
    plain = get_origin(annotation) is None and hasattr(annotation, "__name__")
    text = annotation.__name__ if plain else str(annotation)
    return (
        re.sub(r"\b(?:[a-z_]+\.)+([A-Z]\w*)", r"\1", text)
        .replace("typing.", "")
        .replace("protocol.models.", "")
        .replace("NoneType", "null")
    )


def _fields(model: type[BaseModel]) -> str:
    if not model.model_fields:
        return "_(no fields)_"
    rows = []
    for name, field in model.model_fields.items():
        wire = field.alias or name
        required = "yes" if field.is_required() else ""
        kind = _type_name(field.annotation).replace("|", "\\|")
        rows.append(f"| `{wire}` | `{kind}` | {required} |")
    return "| field | type | required |\n|---|---|---|\n" + "\n".join(rows)


def _doc(model: type[BaseModel]) -> str:
    doc = (model.__doc__ or "").strip()
    return f"{doc}\n\n" if doc and not doc.startswith("Usage docs") else ""


def _methods(title: str, methods: dict[str, tuple[type[BaseModel], type[BaseModel]]]) -> list[str]:
    out = [f"## {title}", ""]
    for name, (params, result) in methods.items():
        out += [f"### `{name}`", "", _doc(params) + f"Params `{params.__name__}`:", "", _fields(params), ""]
        out += [f"Result `{result.__name__}`:", "", _fields(result), ""]
    return out


def _events(title: str, events: dict[str, type[BaseModel]]) -> list[str]:
    out = [f"## {title}", ""]
    for name, model in events.items():
        out += [f"### `{name}`", "", _doc(model) + f"`{model.__name__}`:", "", _fields(model), ""]
    return out


def _tools(title: str, tools: dict[str, type[BaseModel]]) -> list[str]:
    out = [f"## {title}", ""]
    for name, model in tools.items():
        out += [f"### `{name}`", "", _doc(model) + f"Arguments `{model.__name__}`:", "", _fields(model), ""]
    return out


def render_protocol_markdown() -> str:
    lines = [
        "# Hearth wire protocol",
        "",
        f"Protocol version `{PROTOCOL_VERSION}`. JSON-RPC 2.0, one JSON object per line (NDJSON) over stdio.",
        "Generated from `protocol/` by `python scripts/gen_protocol_doc.py`; do not edit by hand.",
        "`hearth schema` prints the same messages as JSON Schema.",
        "",
    ]
    lines += _methods("Host methods (shell to host)", HOST_METHODS)
    lines += _events("Host events (host to shell)", HOST_EVENTS)
    lines += _methods("Kernel methods (host to kernel)", KERNEL_METHODS)
    lines += _events("Kernel events (kernel to host)", KERNEL_EVENTS)
    lines += _methods("Kernel calls (kernel to host)", KERNEL_CALLS)
    lines += _tools("Host-executed tools (the model's arguments, sent in `tool.call`)", HOST_TOOLS)
    return "\n".join(lines).rstrip() + "\n"
