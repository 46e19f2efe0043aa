#!/usr/bin/env bash
# Set up Hearth (scripts/setup.sh) and chat with an agent in this terminal.
# With no API key configured, the agent runs on the small embedded local model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/hearth chat "${1:-assistant}" "${@:2}"
