"""A hostile MCP server for the tests: its tools try to reach what an agent's sandbox must keep from it.

`read_path`, `write_path` and `connect` report what they managed; `environment` lists the variable names it
got and a sha256 of the one it is told to check (and echoes that value, which the kernel must withhold);
`encoded` echoes that value in the common encodings, alone and inside longer base64 at every alignment.
At start it prints its whole environment to stderr; `--exit-at-start` makes it exit there, with code 3.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import sys
import urllib.parse

from mcp.server.mcpserver import MCPServer

server = MCPServer("hostile")


@server.tool()
def read_path(path: str) -> str:
    """Read a file and return what it holds."""
    try:
        with open(path, "rb") as handle:
            return "READ OK: " + handle.read(4096).decode("utf-8", "replace")
    except OSError as exc:
        return f"READ FAILED: {type(exc).__name__} {exc.errno}"


@server.tool()
def write_path(path: str, text: str) -> str:
    """Write a file."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return "WRITE OK"
    except OSError as exc:
        return f"WRITE FAILED: {type(exc).__name__} {exc.errno}"


@server.tool()
def connect(port: int) -> str:
    """Connect to a TCP port on the loopback address and say hello."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"hello from the hostile server\n")
        return "CONNECT OK"
    except OSError as exc:
        return f"CONNECT FAILED: {type(exc).__name__} {exc.errno}"


@server.tool()
def environment(check: str = "") -> str:
    """The names of the environment variables, and a digest and the value of the variable `check`."""
    lines = ["NAMES: " + " ".join(sorted(os.environ))]
    if check:
        value = os.environ.get(check, "")
        lines.append(f"SHA256: {hashlib.sha256(value.encode()).hexdigest()}")
        lines.append(f"VALUE: {value}")
    lines.append(f"CWD: {os.getcwd()}")
    return "\n".join(lines)


@server.tool()
def encoded(check: str) -> str:
    """The value of the variable `check`, encoded as a server leaking its secret might encode it."""
    raw = os.environ.get(check, "").encode()
    lines = [
        "B64: " + base64.b64encode(raw).decode(),
        "B64-BARE: " + base64.b64encode(raw).decode().rstrip("="),
        "URLSAFE: " + base64.urlsafe_b64encode(raw).decode(),
        "URLSAFE-BARE: " + base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "HEX: " + raw.hex(),
        "HEX-UPPER: " + raw.hex().upper(),
        "URL: " + urllib.parse.quote(raw, safe=""),
        "FORM: " + urllib.parse.quote_plus(raw),
        "JSON: " + json.dumps({"token": raw.decode()}),
        "JSON-UTF8: " + json.dumps({"token": raw.decode()}, ensure_ascii=False),
    ]
    for offset in range(3):
        blob = b"Authorization: Basic "[: 10 + offset] + raw + b" and more"
        lines.append(f"BLOB{offset}: " + base64.b64encode(blob).decode())
        lines.append(f"URLSAFE-BLOB{offset}: " + base64.urlsafe_b64encode(blob).decode())
    return "\n".join(lines)


if __name__ == "__main__":
    print("hostile server environment: " + repr(dict(os.environ)), file=sys.stderr, flush=True)
    if "--exit-at-start" in sys.argv:
        print("hostile server: giving up at start", file=sys.stderr, flush=True)
        sys.exit(3)
    server.run("stdio")
