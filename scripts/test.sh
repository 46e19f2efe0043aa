#!/usr/bin/env bash
# Set up Hearth (scripts/setup.sh), lint and type-check it, and run the whole test suite.
# Fails on any lint or type error, any failing test, and if no test ran (pytest exits 5).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check protocol host kernel sandbox desktop hearth scripts tests
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
