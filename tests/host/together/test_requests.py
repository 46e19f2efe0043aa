"""The request book: opened and closed once, durable across a reopen, a torn line skipped and ended, and a
line the disk refuses cut back off (STORAGE_FULL) with the book as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.errors import StorageError
from host.together.requests import REQUESTS_FILE, RequestBook
from protocol.errors import STORAGE_FULL
from tests.support.small_disk import fill, small_tmpfs


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


def test_a_request_closes_once_and_its_outcome_and_delivery_survive_a_reopen(tmp_path: Path) -> None:
    clock = FakeClock()
    book = RequestBook(tmp_path, clock)
    one = book.open_request("ann", "bob", "why?", 30, 1)
    two = book.open_request("ann", "cy", "how?", 60, 1)
    assert book.close(one.request_id, "answered", "because") is not None
    assert book.close(one.request_id, "timeout", "late") is None
    book.mark_delivered(one.request_id)
    again = RequestBook(tmp_path, clock)
    first = again.get(one.request_id)
    assert first is not None and (first.status, first.answer, first.delivered) == ("answered", "because", True)
    assert [r.request_id for r in again.open_requests()] == [two.request_id]


def test_deadlines_come_from_the_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    book = RequestBook(tmp_path, clock)
    soon = book.open_request("ann", "bob", "q", 10, 0)
    book.open_request("ann", "bob", "q", 100, 0)
    assert book.due() == [] and book.next_deadline() == 1010.0
    clock.t = 1010.0
    assert [r.request_id for r in book.due()] == [soon.request_id]


def test_a_torn_last_line_is_skipped_and_the_next_append_stands_on_its_own_line(tmp_path: Path) -> None:
    clock = FakeClock()
    book = RequestBook(tmp_path, clock)
    kept = book.open_request("ann", "bob", "q", 10, 0)
    with (tmp_path / REQUESTS_FILE).open("ab") as f:
        f.write(b'{"op":"open","id":"q-torn')
    again = RequestBook(tmp_path, clock)
    assert [r.request_id for r in again.all()] == [kept.request_id]
    later = again.open_request("ann", "cy", "q2", 10, 0)
    third = RequestBook(tmp_path, clock)
    assert [r.request_id for r in third.all()] == [kept.request_id, later.request_id]


def test_a_line_the_full_disk_takes_only_part_of_is_cut_back_and_the_book_is_as_it_was(tmp_path: Path) -> None:
    clock = FakeClock()
    with small_tmpfs(tmp_path / "disk", "size=64k") as disk:
        book = RequestBook(disk, clock)
        kept = book.open_request("ann", "bob", "short?", 10, 0)
        fill(disk / "filler")  # what is left is the rest of the book's last page: less than the next line
        before = (disk / REQUESTS_FILE).read_bytes()
        with pytest.raises(StorageError) as refused:
            book.open_request("ann", "bob", "long? " * 2000, 10, 0)
        assert refused.value.code == STORAGE_FULL and refused.value.data["path"] == str(disk / REQUESTS_FILE)
        with pytest.raises(StorageError) as refused:
            book.close(kept.request_id, "answered", "a long answer " * 1000)
        assert refused.value.code == STORAGE_FULL
        assert (disk / REQUESTS_FILE).read_bytes() == before, "no part of a refused line is left"
        assert [r.request_id for r in book.all()] == [kept.request_id] and book.open_requests()[0].open
        (disk / "filler").unlink()
        assert book.close(kept.request_id, "answered", "now") is not None
        again = RequestBook(disk, clock)
        assert [(r.request_id, r.status, r.answer) for r in again.all()] == [(kept.request_id, "answered", "now")]
