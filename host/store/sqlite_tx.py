"""The one way Hearth's SQLite files are written: `write_transaction`, all of it or none of it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["write_transaction"]


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` ... `COMMIT` on `db` (opened with `isolation_level=None`), rolled back on any error.

    A COMMIT the database refuses (a full disk) can leave the transaction open, and an error SQLite rolled
    back by itself leaves none: either way the transaction is ended, so the connection's next write is not
    refused for an open transaction, and the error that ended it is the one raised.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
