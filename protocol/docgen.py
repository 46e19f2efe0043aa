"""`docs/protocol.md`, generated from the wire models so the document cannot drift from the code."""

from __future__ import annotations

import re
from typing import Any, get_origin

from pydantic import BaseModel

from protocol.dispatch import BATCH_GROUP
from protocol.framing import MAX_FRAME_BYTES
from protocol.limits import INITIALIZE_SECONDS, MAX_IN_FLIGHT, OUTBOX_BYTES
from protocol.models.host import PROTOCOL_VERSION, STARTED_PREVIEW_CHARS
from protocol.peer import DECODE_IN_THREAD_BYTES
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


def _limits() -> list[str]:
    rows = [
        (
            "frame size",
            f"{MAX_FRAME_BYTES:,} bytes (64 MiB), not counting the newline",
            "refused while it is read (its first 4 KiB are kept, the rest is dropped): `-32600` to its id when "
            "its leading members show the id, else to `id: null`; an answer that long fails the call it answers; "
            "the connection goes on",
        ),
        (
            "decoding on a worker thread",
            f"frames of {DECODE_IN_THREAD_BYTES:,} bytes or more",
            "their strictness checks let other clients be served meanwhile (the JSON decoder itself holds the "
            "interpreter while it builds the value)",
        ),
        ("batch", f"{BATCH_GROUP} members run at once", "the others wait their turn"),
        (
            "events waiting for one client",
            f"{OUTBOX_BYTES:,} bytes",
            "a socket client is disconnected; the stdio shell misses events until it has read half of them, "
            "then gets `host.eventsDropped`",
        ),
        (
            "requests in flight on one connection",
            f"{MAX_IN_FLIGHT}",
            "the host reads nothing more from that connection until an answer has been written",
        ),
        (
            "`initialize` on the socket",
            f"within {INITIALIZE_SECONDS:g} s of connecting",
            "the client is disconnected (the stdio shell has no deadline)",
        ),
        (
            "text in `agent.started`",
            f"{STARTED_PREVIEW_CHARS:,} characters",
            "cut, with `truncated: true` and the whole `textLength`; `agent.transcript` has all of it",
        ),
    ]
    out = ["## Limits", "", "| limit | value | past it |", "|---|---|---|"]
    out += [f"| {name} | {value} | {past} |" for name, value, past in rows]
    return [*out, ""]


def render_protocol_markdown() -> str:
    lines = [
        "# Hearth wire protocol",
        "",
        f"Protocol version `{PROTOCOL_VERSION}`. JSON-RPC 2.0, one JSON object per line (NDJSON) over stdio.",
        "Generated from `protocol/` by `python scripts/gen_protocol_doc.py`; do not edit by hand.",
        "`hearth schema` prints the same messages as JSON Schema.",
        "",
    ]
    lines += _limits()
    lines += _methods("Host methods (shell to host)", HOST_METHODS)
    lines += _events("Host events (host to shell)", HOST_EVENTS)
    lines += _methods("Kernel methods (host to kernel)", KERNEL_METHODS)
    lines += _events("Kernel events (kernel to host)", KERNEL_EVENTS)
    lines += _methods("Kernel calls (kernel to host)", KERNEL_CALLS)
    lines += _tools("Host-executed tools (the model's arguments, sent in `tool.call`)", HOST_TOOLS)
    return "\n".join(lines).rstrip() + "\n"
