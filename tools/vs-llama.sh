#!/usr/bin/env bash
# Prefill and decode, sixstep and llama.cpp side by side on the same files.
#
#   tools/vs-llama.sh LLAMA_TIMING [ROUNDS] MODEL.gguf...
#
# For each file, ROUNDS (default 3) rounds alternate the two engines, each
# round `sixstep bench -p 128 -n 128 -r 3 -t 2` then `LLAMA_TIMING MODEL 2
# 128 128 3` (tools/llama_timing.cpp), so both see the same moment of a
# shared machine; compare within a round. Under `chrt -f 5` when allowed.
# SIXSTEP_CPU=avx2 (or scalar, avx512) forces sixstep's kernel level; build
# llama.cpp with the matching flags for a like-for-like run.
set -euo pipefail
llama=${1:?usage: tools/vs-llama.sh LLAMA_TIMING [ROUNDS] MODEL.gguf...}
shift
rounds=3
if [[ ${1:-} =~ ^[0-9]+$ ]]; then rounds=$1; shift; fi
[[ $# -gt 0 ]] || { echo "vs-llama.sh: give at least one model file" >&2; exit 2; }
[[ -x "$llama" ]] || { echo "vs-llama.sh: $llama is not an executable (build tools/llama_timing.cpp)" >&2; exit 2; }
sixstep=${SIXSTEP:-$(dirname "$0")/../build/release/sixstep}
[[ -x "$sixstep" ]] || { echo "vs-llama.sh: no sixstep binary at $sixstep (set SIXSTEP=...)" >&2; exit 2; }
rt=()
chrt -f 5 true 2>/dev/null && rt=(chrt -f 5)

for model in "$@"; do
  [[ -f "$model" ]] || { echo "vs-llama.sh: $model is not a regular file" >&2; exit 2; }
  for ((r = 1; r <= rounds; r++)); do
    s=$("${rt[@]}" "$sixstep" bench -m "$model" -p 128 -n 128 -r 3 -t 2 |
        awk -F'|' '/ pp128 | tg128 /{gsub(/ /, "", $(NF-2)); split($(NF-1), v, " "); printf "%s %s  ", $(NF-2), v[1]}')
    l=$("${rt[@]}" "$llama" "$model" 2 128 128 3 | awk '{printf "%s %s  ", $2, $3}')
    echo "$(basename "$model") round $r: sixstep $s| llama.cpp $l"
  done
done
