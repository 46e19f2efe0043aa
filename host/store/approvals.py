"""The per-agent store of remembered tool approvals: `agents/<id>/tool-approvals.json`.

One rule per exact (action, canonical target); remembering a new decision for the same pair replaces the old
one. Every write is atomic (temp file in the same directory, fsync, rename, fsync of the directory), so a crash
leaves the old file or the new one. A corrupt file is moved aside (`.corrupt-<time>`), never overwritten, and
the store starts empty with a logged warning.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from host.store.atomic import write_bytes_atomic
from sandbox.approval import Rule

__all__ = ["ApprovalStore"]

logger = logging.getLogger(__name__)

_VERSION = 1


class ApprovalStore:
    """Remembered approvals of one agent, read from and written to its `tool-approvals.json`."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._rules: dict[tuple[str, str], Rule] = {}
        self._decided_at: dict[tuple[str, str], str] = {}
        self.load()

    @classmethod
    def for_agent(cls, data_dir: Path, agent_id: str) -> ApprovalStore:
        """The store of `agent_id` in `data_dir`."""
        return cls(data_dir / "agents" / agent_id / "tool-approvals.json")

    def load(self) -> None:
        """(Re)read the file; a missing file is empty, a corrupt one is empty with a warning."""
        self._rules.clear()
        self._decided_at.clear()
        try:
            raw = json.loads(self._path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._set_aside(f"unreadable ({exc})")
            return
        entries = raw.get("rules") if isinstance(raw, dict) else None
        if not isinstance(entries, list):
            self._set_aside("no list of rules")
            return
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            action, target, decision = entry.get("action"), entry.get("target"), entry.get("decision")
            if isinstance(action, str) and action and isinstance(target, str) and decision in ("allow", "deny"):
                self._rules[(action, target)] = Rule(action, target, decision)
                self._decided_at[(action, target)] = str(entry.get("decidedAt", ""))

    def _set_aside(self, why: str) -> None:
        """Move a bad file aside (so the next write cannot destroy it) and start empty."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        aside = self._path.with_name(f"{self._path.name}.corrupt-{stamp}")
        try:
            os.replace(self._path, aside)
        except OSError:
            aside = self._path
        logger.warning(
            "approvals file %s is %s; kept as %s, starting with no remembered approvals", self._path, why, aside
        )

    def rules(self) -> tuple[Rule, ...]:
        """Every remembered rule, oldest decision first."""
        return tuple(self._rules.values())

    def remember(self, action: str, target: str, decision: Literal["allow", "deny"]) -> Rule:
        """Remember `decision` for exactly (`action`, `target`) and persist it atomically.

        Raises:
            ValueError: an empty action or an unknown decision.
            OSError: the file could not be written (the rule is then not remembered).
        """
        if not action or decision not in ("allow", "deny"):
            raise ValueError("an approval needs an action and a decision of allow or deny")
        key = (action, target)
        rules, stamps = dict(self._rules), dict(self._decided_at)
        rules.pop(key, None)
        rules[key] = Rule(action, target, decision)
        stamps[key] = datetime.now(UTC).isoformat(timespec="seconds")
        self._write(rules, stamps)
        self._rules, self._decided_at = rules, stamps
        return rules[key]

    def _write(self, rules: dict[tuple[str, str], Rule], stamps: dict[tuple[str, str], str]) -> None:
        body = [
            {"action": r.action, "target": r.target, "decision": r.decision, "decidedAt": stamps[key]}
            for key, r in rules.items()
        ]
        self._path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(
            self._path, (json.dumps({"version": _VERSION, "rules": body}, indent=2) + "\n").encode("utf-8")
        )
