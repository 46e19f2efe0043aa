#!/usr/bin/env bash
# Benchmark: how long a new user waits. Times `scripts/setup.sh` from nothing (a fresh clone of this
# checkout's HEAD and an empty pip cache, so every wheel is downloaded and llama.cpp is compiled) with the
# embedded model and without it, then the second start of the set-up checkout: `scripts/start.sh` in a
# real terminal (tmux) until the shell shows a ready host. Prints the three figures and the ratio of the
# full set-up to the one without the local model.
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

# The second start: `scripts/start.sh` in a real terminal (tmux), timed until the shell shows a ready host.
shell_start() {  # $1: a data dir of its own
  local sock="bench-$$-$RANDOM" start=$EPOCHREALTIME
  tmux -L "$sock" -f /dev/null new-session -d -s main -x 120 -y 36 \
    "cd '$work/with-model' && HEARTH_IDLE_EXIT=1 bash scripts/start.sh --data-dir '$1'"
  until tmux -L "$sock" capture-pane -p -t main 2>/dev/null | grep -q "host: ready"; do
    if awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { exit !(b - a > 60) }'; then
      echo "bench_setup: the shell did not show a ready host within 60 s" >&2
      tmux -L "$sock" capture-pane -p -t main >&2 || true
      exit 1
    fi
    sleep 0.02
  done
  elapsed "$start"
  tmux -L "$sock" kill-server
  sleep 2  # the host the shell started leaves once idle (HEARTH_IDLE_EXIT=1)
}

second=()
for i in 1 2 3 4 5; do
  second+=("$(shell_start "$work/data-$i")")
done
median=$(printf '%s\n' "${second[@]}" | sort -n | sed -n 3p)

printf '%-52s %8.1f s\n' "set-up from nothing, with the embedded model" "$with_model"
printf '%-52s %8.1f s\n' "set-up from nothing, without it (HEARTH_LOCAL_MODEL=0)" "$without_model"
printf '%-52s %8.2f s (median of 5)\n' "second start (start.sh until the shell shows a ready host)" "$median"
printf '%-52s %8.2fx\n' "with the model / without" "$(awk -v a="$with_model" -v b="$without_model" 'BEGIN { print a / b }')"
printf 'cores: %s\n' "$(nproc)"
