"""Rank fusion is one function that memory's recall and knowledge search both call."""

from __future__ import annotations

import pytest

from host.knowledge import search as knowledge_search
from host.memory import ranking as memory_ranking
from host.rank_fusion import fuse


def test_memory_and_knowledge_rank_through_the_same_fusion_function() -> None:
    assert memory_ranking.fuse is fuse
    assert knowledge_search.fuse is fuse


def test_an_id_in_both_lists_beats_ids_first_in_one() -> None:
    fused = fuse([(1.0, [1, 2, 3]), (1.0, [3, 4])], k=10)
    assert [seq for seq, _ in fused] == [3, 1, 4, 2]
    assert dict(fused)[3] == pytest.approx(1 / 13 + 1 / 11)


def test_a_list_of_weight_zero_does_not_vote_and_ties_go_to_the_larger_id() -> None:
    assert fuse([(1.0, [5]), (0.0, [9])], k=10) == [(5, pytest.approx(1 / 11))]
    assert [seq for seq, _ in fuse([(1.0, [1]), (1.0, [2])], k=10)] == [2, 1]
