"""How fast `hearth` answers: the CLI imports only what the command it runs needs.

Runs `python -c pass` (the interpreter's own start-up, the baseline), `python -m hearth --help` and
`python -m hearth agents` against a host running on a data dir of three agents, in turn, N times each, and
prints the medians and their ratios to the baseline. Goals: `hearth --help` at most 3x, `hearth agents` at
most 5x.

    .venv/bin/python scripts/bench_cli.py [N]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _host(data_dir: Path) -> subprocess.Popen[bytes]:
    """A host on `data_dir` (its stdio kept open, so it stays), once it answers on its socket with 3 agents."""
    host = subprocess.Popen(
        [sys.executable, "-m", "host", "--data-dir", str(data_dir)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert host.stdin is not None
    frames = [{"client": {"name": "bench"}, "protocolVersion": _protocol_version()}]
    frames += [{"name": name} for name in ("Ann", "Bob", "Cy")]
    methods = ["initialize", "agent.create", "agent.create", "agent.create"]
    for i, (method, params) in enumerate(zip(methods, frames, strict=True), 1):
        host.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n")
    host.stdin.flush()
    assert host.stdout is not None
    answered = 0
    while answered < len(methods):
        if "id" in json.loads(host.stdout.readline()):
            answered += 1
    return host


def _protocol_version() -> str:
    done = subprocess.run(
        [sys.executable, "-c", "from protocol.models.handshake import PROTOCOL_VERSION; print(PROTOCOL_VERSION)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with tempfile.TemporaryDirectory() as scratch:
        data_dir = Path(scratch)
        host = _host(data_dir)
        try:
            agents = [sys.executable, "-m", "hearth", "agents", "--data-dir", str(data_dir)]
            assert b"Ann" in subprocess.run(agents, cwd=ROOT, capture_output=True, check=True).stdout
            baseline, helped, listed = [], [], []
            for _ in range(runs):  # interleaved, so load on the machine hits all alike
                baseline.append(_seconds([sys.executable, "-c", "pass"]))
                helped.append(_seconds([sys.executable, "-m", "hearth", "--help"]))
                listed.append(_seconds(agents))
        finally:
            host.terminate()
            host.wait(timeout=30)
    base = statistics.median(baseline)
    goals = {"hearth --help": 3.0, "hearth agents": 5.0}
    for label, times in (("python -c pass", baseline), ("hearth --help", helped), ("hearth agents", listed)):
        median = statistics.median(times)
        goal = (
            f"   goal <= {goals[label]:.0f}x: {'met' if median / base <= goals[label] else 'NOT MET'}"
            if label in goals
            else ""
        )
        print(f"{label:<16} median {median * 1000:7.1f} ms   ratio {median / base:5.2f}x   ({runs} runs){goal}")


if __name__ == "__main__":
    main()
