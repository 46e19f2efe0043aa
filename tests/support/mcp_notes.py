"""A small MCP server for the tests, written with the `mcp` package: notes kept in memory, and one way to die.

Run as `python mcp_notes.py`; it speaks MCP on stdio. `add` and `list` keep notes for the life of the process,
so a second call seeing the first one's note shows the kernel kept one session; `wait` takes its time and
`crash` exits mid-call.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
NOTES: list[str] = []


@server.tool(name="add")
def add(text: str) -> str:
    """Add a note."""
    NOTES.append(text)
    return f"added note {len(NOTES)}: {text}"


@server.tool(name="list")
def list_notes() -> str:
    """List every note, one a line."""
    return "\n".join(f"{n}. {note}" for n, note in enumerate(NOTES, 1)) or "(no notes)"


@server.tool(name="wait")
async def wait(seconds: float) -> str:
    """Wait, then answer (a call to cancel)."""
    await anyio.sleep(seconds)
    return f"waited {seconds:g} seconds"


@server.tool(name="crash")
def crash() -> str:
    """Exit the server in the middle of the call."""
    print("notes server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    server.run("stdio")
