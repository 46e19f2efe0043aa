"""The line an editor's session puts before a person's message to name the project they opened.

It is part of the message the model reads (and of the transcript); every client that shows the message to
the person takes it off again, so the editor, the desktop shell and `hearth chat` show the same words.
"""

from __future__ import annotations

__all__ = ["project_note", "without_project_note"]

_NOTE_START = "[The person is working in the project "
_NOTE_END = "writing there asks the person first.]\n\n"


def project_note(project_root: str) -> str:
    """The line that tells the model which project the person opened, put before their first message there."""
    return f"{_NOTE_START}{project_root}. You may read, list and grep it with absolute paths; {_NOTE_END}".rstrip()


def without_project_note(text: str) -> str:
    """A message as the person wrote it: the project line put before it (if any) taken off again."""
    if text.startswith(_NOTE_START) and _NOTE_END in text:
        return text.split(_NOTE_END, 1)[1]
    return text
