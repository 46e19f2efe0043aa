#!/usr/bin/env bash
# Set up Hearth (scripts/setup.sh) and open the desktop shell in this terminal.
# On a first run it makes an "Assistant" agent on the small embedded local model (no API key needed).
# Arguments go to `hearth` (e.g. `bash scripts/start.sh --data-dir /tmp/try`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/hearth "$@"
