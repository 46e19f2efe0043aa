#!/usr/bin/env bash
# Set up Hearth (scripts/setup.sh), check a second set-up installs nothing, lint, format-check and
# type-check it, and run the whole test suite. Fails on any lint, format or type error, any failing test,
# and if no test ran (pytest exits 5).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
before=$(.venv/bin/python -m pip freeze)
second=$(bash scripts/setup.sh)
if [[ "$second" != *"up to date"* ]] || [ "$before" != "$(.venv/bin/python -m pip freeze)" ]; then
  echo "test: a second scripts/setup.sh run installed something: $second" >&2
  exit 1
fi
.venv/bin/ruff check protocol host kernel sandbox desktop hearth scripts tests
.venv/bin/ruff format --check --quiet protocol host kernel sandbox desktop hearth scripts tests
.venv/bin/mypy
# The suite waits on real processes far more than it computes, so three workers share two cores well; an idle
# worker takes tests from a busy one (worksteal), since a few end-to-end files take most of the time.
.venv/bin/python -m pytest -n "${HEARTH_TEST_WORKERS:-3}" --dist worksteal --durations=20 "$@"
