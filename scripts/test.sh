#!/usr/bin/env bash
# Set up Hearth (scripts/setup.sh) and run the whole test suite. Fails if no test ran.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m pytest "$@"
