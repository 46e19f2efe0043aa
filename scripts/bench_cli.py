"""How fast `hearth --help` answers: the CLI imports nothing heavy until a subcommand runs.

Runs `python -c pass` (the interpreter's own start-up, the baseline) and `python -m hearth --help` in
turn, N times each, and prints the medians and their ratio. Target: `hearth --help` under 0.3 s.

    .venv/bin/python scripts/bench_cli.py [N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    baseline, helped, version = [], [], []
    for _ in range(runs):  # interleaved, so load on the machine hits both alike
        baseline.append(_seconds([sys.executable, "-c", "pass"]))
        helped.append(_seconds([sys.executable, "-m", "hearth", "--help"]))
        version.append(_seconds([sys.executable, "-m", "hearth", "--version"]))
    base = statistics.median(baseline)
    for label, times in (("python -c pass", baseline), ("hearth --help", helped), ("hearth --version", version)):
        median = statistics.median(times)
        print(f"{label:<18} median {median * 1000:7.1f} ms   ratio {median / base:5.2f}x   ({runs} runs)")
    verdict = "under" if statistics.median(helped) < 0.3 else "OVER"
    print(f"hearth --help is {verdict} the 0.3 s target")


if __name__ == "__main__":
    main()
