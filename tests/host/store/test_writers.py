"""Every storage file of the host writes through `host/store/atomic.py` or `durable.py`: no other module under
host/ writes a file itself, except the few that docs/decisions.md names as exempt, each for its reason."""

from __future__ import annotations

import re
from pathlib import Path

HOST = Path(__file__).resolve().parents[3] / "host"

WRITES = re.compile(
    r"""os\.(p?write|writev)\(|\.write_(text|bytes)\(|os\.O_(WRONLY|RDWR|APPEND|CREAT)"""
    r"""|\bopen\([^)\n]*["'](?=[rbt]*[wax+])[rwabxt+]+["']|shutil\.copy"""
)

THE_PRIMITIVES = {"store/atomic.py", "store/durable.py"}
EXEMPT = {
    "lock.py": "the lock is the flock; the record in the file only names the holder",
    "memory/ledger.py": "one descriptor under the ledger's own flock, committed by offset, cut back on failure",
    "memory/scrub.py": "an erase overwrites bytes in place at the same length",
    "store/transcript.py": "the torn-tail repair cuts the file it has open (the cut bytes go through durable)",
}


def test_only_the_primitives_and_the_named_exemptions_write_files() -> None:
    writers = {
        str(path.relative_to(HOST)) for path in HOST.rglob("*.py") if WRITES.search(path.read_text(encoding="utf-8"))
    }
    assert writers - THE_PRIMITIVES - set(EXEMPT) == set(), "write through host.store.atomic or durable"
    assert set(EXEMPT) <= writers, "an exemption that no longer writes should go"
