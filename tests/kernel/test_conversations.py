"""The conversations the kernel holds: a request continues a held prefix named by its chain hash, or is refused.

Issue 22.12: each turn sent, validated and converted the whole conversation; now only what follows the part
the kernel holds for the session, and a kernel that does not hold it says so.
"""

from __future__ import annotations

import pytest

from kernel.conversations import Conversations
from kernel.errors import UnknownPrefixError
from protocol.errors import UNKNOWN_PREFIX
from protocol.models.kernel import ChatMessage, MessagePrefix, chain_hashes


def _messages(*texts: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text) for text in texts]


def test_a_request_continues_the_messages_its_prefix_names() -> None:
    held = Conversations()
    first = _messages("a", "b", "c")
    held.keep("s", held.resolve("s", None, first))
    prefix = MessagePrefix(count=2, hash=chain_hashes(first)[1])
    whole = held.resolve("s", prefix, _messages("d"))
    assert [m.content for m in whole.messages] == ["a", "b", "d"]
    assert list(whole.chain) == chain_hashes(_messages("a", "b", "d"))


def test_a_prefix_with_another_hash_another_count_or_another_session_is_refused() -> None:
    held = Conversations()
    first = _messages("a", "b")
    held.keep("s", held.resolve("s", None, first))
    for session, prefix in [
        ("s", MessagePrefix(count=2, hash=chain_hashes(_messages("a", "x"))[1])),
        ("s", MessagePrefix(count=3, hash=chain_hashes(first)[1])),
        ("other", MessagePrefix(count=2, hash=chain_hashes(first)[1])),
        (None, MessagePrefix(count=2, hash=chain_hashes(first)[1])),
    ]:
        with pytest.raises(UnknownPrefixError) as refused:
            held.resolve(session, prefix, _messages("c"))
        assert refused.value.code == UNKNOWN_PREFIX
    # the held list is untouched by refusals
    again = held.resolve("s", MessagePrefix(count=2, hash=chain_hashes(first)[1]), [])
    assert [m.content for m in again.messages] == ["a", "b"]


def test_a_list_resolved_but_not_kept_leaves_the_held_one_in_place() -> None:
    """A summary continues the turn's list with its instruction; the next turn continues the turn's list."""
    held = Conversations()
    turn = _messages("a", "b")
    held.keep("s", held.resolve("s", None, turn))
    held.resolve("s", MessagePrefix(count=2, hash=chain_hashes(turn)[1]), _messages("summarise this"))
    later = held.resolve("s", MessagePrefix(count=2, hash=chain_hashes(turn)[1]), _messages("c"))
    assert [m.content for m in later.messages] == ["a", "b", "c"]


def test_the_least_recently_used_sessions_are_let_go_past_the_bound_and_a_forgotten_one_is_refused() -> None:
    held = Conversations(max_messages=5)
    lists = {name: _messages(*(f"{name}{n}" for n in range(3))) for name in ("a", "b")}
    for name, messages in lists.items():
        held.keep(name, held.resolve(name, None, messages))
    with pytest.raises(UnknownPrefixError):
        held.resolve("a", MessagePrefix(count=3, hash=chain_hashes(lists["a"])[2]), [])
    assert len(held.resolve("b", MessagePrefix(count=3, hash=chain_hashes(lists["b"])[2]), []).messages) == 3
    held.forget("b")
    with pytest.raises(UnknownPrefixError):
        held.resolve("b", MessagePrefix(count=3, hash=chain_hashes(lists["b"])[2]), [])
