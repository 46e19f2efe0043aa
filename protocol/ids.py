"""Identifiers and small vocabularies shared by every process: defined once, here.

Agent and Work ids are lowercase slugs; memory record ids are `m-` and 12 hex digits; a fact key is a
dotted slot such as `user.home_city`. An approval decision is one of four words.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["AGENT_ID_PATTERN", "KEY_PATTERN", "RECORD_ID_PATTERN", "SECRET_NAME_PATTERN", "Decision"]

AGENT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
"""An agent's (or a Work's) id: what its directory is called."""

RECORD_ID_PATTERN = r"^m-[0-9a-f]{12}$"
"""A memory record's id."""

KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,99}$"
"""A fact's stable slot, such as `user.home_city`."""

SECRET_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
"""A stored secret's name, such as `openai`."""

Decision = Literal["allow_once", "allow_always", "deny", "deny_always"]
"""A person's answer to an approval question; the `_always` answers are remembered."""
