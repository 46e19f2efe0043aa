"""The editor's frames, checked before the `acp` package acts on them: every bad line is answered, and serving goes on.

The `acp` package reads any JSON value off a line as an object, so `[]`, `5` or `null` ended `hearth acp`.
`EditorFrames` is the package's message transport (`receive`, `send`, `close`) over the editor's pipes, with
Hearth's own framing, strict JSON and envelope check (`protocol.framing`, `protocol.codec`, `protocol.envelope`):
a line that is not strict JSON is answered -32700; anything but one request, notification or response object (a
batch included: ACP has none) -32600, addressed to the message's id when it can be read; a malformed answer to
nobody is dropped. Only a checked message reaches the package, and only strict JSON goes out.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from protocol.codec import FrameDecodeError, FrameEncodeError, decode_frame, encode_frame
from protocol.envelope import Ignored, Invalid, Notification, Request, Response, error_answer, read_message
from protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from protocol.framing import MAX_FRAME_BYTES, FrameTooLargeError, read_frame

__all__ = ["EditorFrames"]

logger = logging.getLogger(__name__)

_BATCH = "Invalid request (hearth acp takes one message per line; a batch is not answered)"


class EditorFrames:
    """ACP messages over the editor's pipes (the `acp` package's `Transport`).

    Args:
        reader: the editor's stdin (with `protocol.framing.READ_LIMIT`).
        writer: the editor's stdout.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._writing = asyncio.Lock()

    async def receive(self) -> dict[str, Any] | None:
        """The next checked message; None once the editor has closed its end."""
        while True:
            try:
                line = await read_frame(self._reader)
            except FrameTooLargeError:
                await self._answer(error_answer(None, INVALID_REQUEST, f"a line over {MAX_FRAME_BYTES} bytes"))
                continue
            if line is None:
                return None
            if not line.strip():
                continue
            message = await self._check(line)
            if message is not None:
                return message

    async def _check(self, line: bytes) -> dict[str, Any] | None:
        """The message `line` holds, or None once it has been answered (or dropped)."""
        try:
            value = decode_frame(line)
        except FrameDecodeError as exc:
            await self._answer(error_answer(None, PARSE_ERROR, str(exc)))
            return None
        if isinstance(value, list):
            await self._answer(error_answer(None, INVALID_REQUEST, _BATCH))
            return None
        if isinstance(value, dict) and "params" in value and value["params"] is None:
            # What the `acp` package itself sends for a call without params; JSON-RPC would omit the member.
            value = {key: member for key, member in value.items() if key != "params"}
        checked = read_message(value)
        if isinstance(checked, Request | Notification):
            return checked.message
        if isinstance(checked, Response):
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": checked.id}
            if checked.error is None:
                answer["result"] = checked.result
            else:
                answer["error"] = checked.error
            return answer
        if isinstance(checked, Invalid):
            await self._answer(checked.answer())
        elif isinstance(checked, Ignored):
            logger.debug("dropped a frame from the editor: %s", checked.reason)
        return None

    async def _answer(self, answer: dict[str, Any]) -> None:
        try:
            await self.send(answer)
        except (ConnectionError, FrameEncodeError) as exc:  # the editor left: receive() sees the end next
            logger.debug("could not answer a bad frame: %s", exc)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as a line of strict JSON; an answer that cannot be written goes out without its data.

        Raises:
            FrameEncodeError: a request or notification that is not strict JSON.
            ConnectionError: the editor has gone.
        """
        try:
            data = encode_frame(message)
        except FrameEncodeError:
            if "method" in message or "id" not in message:
                raise
            # The `acp` package puts pydantic's error details in `data`; some hold exception objects.
            error = message.get("error")
            code, text = INTERNAL_ERROR, "the answer could not be written as JSON"
            if isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
                code, text = error["code"], error["message"]
            data = encode_frame(error_answer(message["id"], code, text))
        async with self._writing:
            self._writer.write(data)
            await self._writer.drain()

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
