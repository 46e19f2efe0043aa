"""Plain-text tables for the terminal commands: aligned columns, long cells cut with an ellipsis.

Scripts use `--json` instead; a table is for a person, so a cell never spans lines.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["render_table", "print_table", "print_json", "one_line", "plain_line"]

MAX_CELL = 72


def one_line(value: object, limit: int = MAX_CELL) -> str:
    """`value` as one line of at most `limit` characters."""
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain_line(value: object, limit: int = MAX_CELL) -> str:
    """`one_line`, with every control character blanked first: for words an agent wrote, which must not move
    the terminal."""
    text = "" if value is None else str(value)
    return one_line("".join(c if c.isprintable() else " " for c in text), limit)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[one_line(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, empty: str) -> None:
    print(render_table(headers, rows) if rows else empty)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
