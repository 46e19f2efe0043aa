"""A small MCP server with the standard library only, so any Python can run it (a pyenv one, a bare venv).

It speaks MCP on stdio by hand: `initialize`, `tools/list`, `tools/call`, `ping`. Its tools: `add` and `list`
keep notes, `where` says which file this module was loaded from, its working directory and interpreter,
`write_workspace` writes a file in the agent's workspace (`$HEARTH_WORKSPACE`), `crash` exits mid-call and
`garble` answers with a line that is not JSON-RPC and then never answers. Copied into a venv's site-packages
it is `notes_server`.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

NOTES: list[str] = []
GARBLE = "this line is not JSON-RPC, and no answer follows"


def _tool(tool: str, description: str, **properties: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {key: {"type": kind} for key, kind in properties.items()}}
    return {"name": tool, "description": description, "inputSchema": schema}


TOOLS = [
    _tool("add", "Add a note.", text="string"),
    _tool("list", "List the notes."),
    _tool("where", "Where this server was loaded from."),
    _tool("write_workspace", "Write a file in the agent's workspace.", name="string", text="string"),
    _tool("crash", "Exit in the middle of the call."),
    _tool("garble", "Answer with a line that is not JSON-RPC."),
]


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _call(name: str, args: dict[str, Any]) -> str:
    if name == "add":
        NOTES.append(str(args.get("text", "")))
        return f"added note {len(NOTES)}: {NOTES[-1]}"
    if name == "list":
        return "\n".join(f"{n}. {note}" for n, note in enumerate(NOTES, 1)) or "(no notes)"
    if name == "where":
        return f"MODULE: {os.path.realpath(__file__)}\nCWD: {os.getcwd()}\nPYTHON: {sys.executable}"
    if name == "write_workspace":
        path = os.path.join(os.environ["HEARTH_WORKSPACE"], str(args["name"]))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(str(args.get("text", "")))
        return f"WROTE {path}"
    if name == "crash":
        print("plain server: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    if name == "garble":
        sys.stdout.write(GARBLE + "\n")
        sys.stdout.flush()
        sys.stdin.readline()  # hold the call open: the kernel must not wait for an answer
        os._exit(0)
    raise KeyError(name)


def _answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "plain-notes", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        text = _call(str(params.get("name")), params.get("arguments") or {})
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    print(f"plain server started from {os.path.realpath(__file__)}", file=sys.stderr, flush=True)
    for line in sys.stdin:
        if line.strip():
            answer = _answer(json.loads(line))
            if answer is not None:
                _send(answer)


if __name__ == "__main__":
    main()
