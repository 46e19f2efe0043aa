"""A real HTTP server on 127.0.0.1 that plays scripted model replies, for the provider tests.

It speaks just enough of two wire formats: OpenAI chat-completions streaming (`data: {...}` lines, then
`data: [DONE]`) and Anthropic Messages streaming (`event: ...` / `data: {...}` pairs). Streams use chunked
transfer encoding, so a reply can be cut in the middle the way a dropped connection looks to a client.
Every request is recorded (path, headers, JSON body, the client's port: one port, one kept-alive
connection) for the tests to inspect.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. `pieces` are sent as separate chunks; `cut` drops the connection after them."""

    status: int = 200
    pieces: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    cut: bool = False
    json_body: Any = None


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any
    port: int = 0


def openai_chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    """One chat-completions stream chunk with one choice: `delta`, ending with `finish` when given."""
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }


def openai_usage(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    """The chunk a stream ends with when usage is asked for: no choice, the token counts (and cached ones)."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": usage}


def openai_stream(*chunks: dict[str, Any] | str, done: bool = True, cut: bool = False) -> Reply:
    """An OpenAI SSE reply; a `str` chunk is sent as raw `data:` text (for malformed JSON)."""
    pieces = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n".encode() for c in chunks]
    if done:
        pieces.append(b"data: [DONE]\n\n")
    return Reply(pieces=pieces, headers={"content-type": "text/event-stream"}, cut=cut)


def anthropic_stream(*events: tuple[str, dict[str, Any] | str], cut: bool = False) -> Reply:
    pieces = [
        f"event: {name}\ndata: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()
        for name, data in events
    ]
    return Reply(pieces=pieces, headers={"content-type": "text/event-stream"}, cut=cut)


AnthropicEvent = tuple[str, dict[str, Any] | str]
"""One `event: NAME` / `data: ...` pair of an Anthropic stream (a `str` is sent as raw text)."""


def anthropic_start(input_tokens: int = 10, cache_read: int = 0, cache_write: int = 0) -> AnthropicEvent:
    """`message_start`, carrying the prompt's token counts (fresh, read from the cache, written to it)."""
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return ("message_start", {"type": "message_start", "message": message})


def anthropic_text_block(index: int, *pieces: str) -> list[AnthropicEvent]:
    """A text block at `index`, streamed in `pieces`."""
    events: list[AnthropicEvent] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
    ]
    for piece in pieces:
        delta = {"type": "text_delta", "text": piece}
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def anthropic_tool_block(index: int, call_id: str, name: str, *json_pieces: str) -> list[AnthropicEvent]:
    """A tool_use block at `index`, its input JSON streamed in `json_pieces`."""
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    events: list[AnthropicEvent] = [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
    ]
    for piece in json_pieces:
        delta = {"type": "input_json_delta", "partial_json": piece}
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def anthropic_finish(stop_reason: str = "end_turn", output_tokens: int = 5) -> list[AnthropicEvent]:
    """`message_delta` with the stop reason and output tokens, then `message_stop`."""
    return [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def error_reply(status: int, message: str, *, headers: dict[str, str] | None = None, kind: str = "error") -> Reply:
    return Reply(
        status=status, json_body={"type": "error", "error": {"type": kind, "message": message}}, headers=headers or {}
    )


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-reply is part of the scenarios, not a server fault.
        pass


class FakeModelServer:
    """Plays `Reply`s in order; with the script exhausted it answers `otherwise`, or 599 so a stray request shows."""

    def __init__(self, *, otherwise: Reply | None = None) -> None:
        self.replies: list[Reply] = []
        self._otherwise = otherwise
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler_class())
        # A short poll keeps `shutdown` quick at teardown.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if self.replies:
                return self.replies.pop(0)
        return self._otherwise or error_reply(599, "no scripted reply left")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = json.loads(raw) if raw else None
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = server._next(Recorded(self.path, headers, body, self.client_address[1]))
                try:
                    self._send(reply)
                except OSError:
                    # The client went away first (a cancelled stream); nothing left to say.
                    self.close_connection = True

            def _send(self, reply: Reply) -> None:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.json_body is not None:
                    data = json.dumps(reply.json_body).encode()
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for piece in reply.pieces:
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                if reply.cut:
                    # No terminating chunk: the client sees the body end early.
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


class FakeClock:
    """Records backoff waits instead of sleeping."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
