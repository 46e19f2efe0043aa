"""An agent's pending document suggestions: `agents/<id>/document-suggestions.json`.

A suggestion is what an agent's `suggest_document` asked for: a path as the agent gave it (never read,
opened or resolved here), its reason, the run and the time. It waits until a person accepts or declines it.
At most `MAX_PENDING` wait per agent, and a path already pending (the same after `normpath`, a pure string
step) is not added twice. Every change is one atomic rewrite under a lock, so there is one writer; a file
that cannot be read is refused with `CorruptFileError` and left as it is, never overwritten.
"""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from host.errors import CorruptFileError
from host.knowledge.errors import SuggestionNotFoundError, TooManySuggestionsError
from host.store.atomic import read_json, write_json_atomic

__all__ = ["Suggestion", "SuggestionStore", "MAX_PENDING", "SUGGESTIONS_FILE"]

MAX_PENDING = 20
"""Suggestions one agent may have waiting for a person."""
SUGGESTIONS_FILE = "document-suggestions.json"
_VERSION = 1
_FIELDS = ("suggestion_id", "agent_id", "path", "reason", "run_id", "suggested_at")


@dataclass(frozen=True, slots=True)
class Suggestion:
    suggestion_id: str
    agent_id: str
    path: str
    reason: str
    run_id: str
    suggested_at: str


class SuggestionStore:
    """Args:
    data_dir: the host's data directory (each agent's file is in its own directory).
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._lock = threading.Lock()

    def path(self, agent_id: str) -> Path:
        return self.data_dir / "agents" / agent_id / SUGGESTIONS_FILE

    def pending(self, agent_id: str) -> list[Suggestion]:
        """The agent's pending suggestions, oldest first. Raises: CorruptFileError."""
        return self._read(agent_id)

    def suggest(self, agent_id: str, path: str, reason: str, run_id: str) -> tuple[Suggestion, bool]:
        """Keep a new suggestion; returns it and True, or the one already pending for that path and False.

        Raises:
            TooManySuggestionsError: `MAX_PENDING` are waiting already.
            CorruptFileError: the file cannot be read (it is left as it is).
            StorageError: the disk refused the write (nothing changed).
        """
        with self._lock:
            held = self._read(agent_id)
            same = os.path.normpath(path)
            for suggestion in held:
                if os.path.normpath(suggestion.path) == same:
                    return suggestion, False
            if len(held) >= MAX_PENDING:
                raise TooManySuggestionsError(
                    f"{MAX_PENDING} suggestions are waiting for the user already; "
                    "ask them to accept or decline those first"
                )
            fresh = Suggestion(
                suggestion_id=f"d-{secrets.token_hex(4)}",
                agent_id=agent_id,
                path=path,
                reason=reason,
                run_id=run_id,
                suggested_at=datetime.now(UTC).isoformat(timespec="seconds"),
            )
            self._write(agent_id, [*held, fresh])
            return fresh, True

    def get(self, agent_id: str, suggestion_id: str) -> Suggestion:
        """Raises: SuggestionNotFoundError, CorruptFileError."""
        return self._find(agent_id, self._read(agent_id), suggestion_id)

    @staticmethod
    def _find(agent_id: str, held: list[Suggestion], suggestion_id: str) -> Suggestion:
        for suggestion in held:
            if suggestion.suggestion_id == suggestion_id:
                return suggestion
        raise SuggestionNotFoundError(f"no pending suggestion {suggestion_id} for {agent_id}")

    def remove(self, agent_id: str, suggestion_id: str) -> Suggestion:
        """Take a suggestion away (a person decided). Raises: SuggestionNotFoundError, CorruptFileError."""
        with self._lock:
            held = self._read(agent_id)
            gone = self._find(agent_id, held, suggestion_id)
            self._write(agent_id, [s for s in held if s is not gone])
            return gone

    def _read(self, agent_id: str) -> list[Suggestion]:
        path = self.path(agent_id)
        raw: Any = read_json(path, {"version": _VERSION, "suggestions": []})
        entries = raw.get("suggestions") if isinstance(raw, dict) else None
        if not isinstance(entries, list):
            raise CorruptFileError(f"{path} holds no list of suggestions", data={"path": str(path)})
        held = []
        for entry in entries:
            if not isinstance(entry, dict) or not all(isinstance(entry.get(name), str) for name in _FIELDS):
                raise CorruptFileError(f"{path} holds a suggestion that is not whole", data={"path": str(path)})
            held.append(Suggestion(**{name: entry[name] for name in _FIELDS}))
        return held

    def _write(self, agent_id: str, held: list[Suggestion]) -> None:
        # The agent's directory is not made here: a suggestion never brings a deleted agent back.
        write_json_atomic(self.path(agent_id), {"version": _VERSION, "suggestions": [asdict(s) for s in held]})
