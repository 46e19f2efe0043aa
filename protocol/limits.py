"""The limits a host holds each client to, beyond a frame's size (`protocol.framing.MAX_FRAME_BYTES`).

They are part of the wire contract, so clients can rely on them and `docs/protocol.md` states them.
"""

from __future__ import annotations

__all__ = ["INITIALIZE_SECONDS", "MAX_IN_FLIGHT", "OUTBOX_BYTES"]

OUTBOX_BYTES = 8 * 1024 * 1024
"""Bytes of events that may wait for one client to read them; a client further behind is too far behind."""

MAX_IN_FLIGHT = 64
"""Requests of one connection that may wait for their answers to be written before the host stops reading it."""

INITIALIZE_SECONDS = 10.0
"""How long a socket client may stay connected without initializing (the stdio shell has no such limit)."""
