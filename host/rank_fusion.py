"""Reciprocal rank fusion (Cormack et al., 2009): ranked lists of ids, each with a weight, fused into one.

Each list votes weight / (k + rank) for every id it holds (rank 1 is its best); a list of weight 0 or less
does not vote. No list's score scale is compared with another's, which is why memory's recall and knowledge
search (words, meaning) both rank through this one function, each passing its own weights and `k`.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["fuse"]


def fuse(lists: Sequence[tuple[float, Sequence[int]]], k: int) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of (weight, ids best first) lists: ids by fused score, best first (ties: newest).

    Args:
        lists: each signal's weight and its ids, best first.
        k: the fusion constant (larger flattens the difference between ranks).

    Returns:
        (id, fused score) for every id any voting list holds; equal scores put the larger id first.
    """
    scores: dict[int, float] = {}
    for weight, seqs in lists:
        if weight <= 0:
            continue
        for rank, seq in enumerate(seqs, start=1):
            scores[seq] = scores.get(seq, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], -item[0]))
