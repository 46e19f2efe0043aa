"""Trust and tombstone rules: the user's word and a person's act stand; peers, tools and files are proposed."""

from __future__ import annotations

import pytest

from host.memory.trust import decide_trust, is_explicit, is_suppressible, valid_source


@pytest.mark.parametrize(
    ("source", "basis", "trust"),
    [
        ("user", None, "confirmed"),
        ("human", None, "confirmed"),
        ("agent", None, "confirmed"),
        ("agent", "user", "confirmed"),
        ("agent", "file", "proposed"),
        ("agent", "tool:read_file", "proposed"),
        ("extractor", "user", "confirmed"),
        ("extractor", "agent", "proposed"),
        ("extractor", "tool:web_search", "proposed"),
        ("peer:bob", None, "proposed"),
        ("tool:web_search", None, "proposed"),
    ],
)
def test_trust_follows_where_the_content_came_from(source: str, basis: str | None, trust: str) -> None:
    assert decide_trust(source, basis) == trust


def test_only_the_user_a_person_or_an_explicit_reassertion_passes_a_tombstone() -> None:
    assert not is_suppressible("user", False) and not is_suppressible("human", False)
    assert not is_suppressible("agent", True)
    assert is_suppressible("agent", False) and is_suppressible("extractor", True) and is_suppressible("peer:bob", True)


def test_sources_are_the_designed_set() -> None:
    assert all(valid_source(s) for s in ("user", "agent", "extractor", "human", "peer:bob", "tool:grep"))
    assert not any(valid_source(s) for s in ("admin", "peer:", "tool", "system"))
    assert is_explicit("agent") and not is_explicit("extractor")
