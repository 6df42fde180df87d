#!/usr/bin/env bash
# Decode beside CPU hogs, sixstep and llama.cpp side by side in one run.
#
#   tools/contention.sh MODEL.gguf [LLAMA_BENCH] [THREADS] [N_GEN] [REPS] [ROUNDS]
#
# LLAMA_BENCH is llama.cpp's llama-bench, or a build of tools/llama_timing.cpp
# (any executable named llama_timing*) where llama-bench is not at hand.
# Starts one busy-looping shell per CPU (normal priority, like a build or a
# browser tab), then, ROUNDS times (default 5), runs the decode test (tgN_GEN,
# median of REPS) of `sixstep bench` and, when LLAMA_BENCH is given, of
# llama.cpp on 1 thread and on THREADS threads, the engines taking turns (the
# first to run changes every round) so that both see the same machine. Where
# the OS puts the hogs decides a single run (one of our threads may share
# its CPU with a hog or have one to itself), so a run alone says little:
# the table gives the medians of the rounds and each round's ratio. Run it
# at normal priority: under chrt the engines would be immune to the hogs.
# `sixstep bench --contention` measures sixstep alone, quiet and hogged.
set -euo pipefail
model=${1:?usage: tools/contention.sh MODEL.gguf [LLAMA_BENCH] [THREADS] [N_GEN] [REPS] [ROUNDS]}
llama=${2:-}
threads=${3:-2}
n_gen=${4:-128}
reps=${5:-5}
rounds=${6:-5}
sixstep=${SIXSTEP:-$(dirname "$0")/../build/release/sixstep}
for arg in "threads=$threads" "n_gen=$n_gen" "reps=$reps" "rounds=$rounds"; do
  [[ ${arg#*=} =~ ^[1-9][0-9]{0,5}$ ]] || { echo "contention.sh: ${arg%%=*} must be a whole number from 1, not \"${arg#*=}\"" >&2; exit 2; }
done
[[ -f "$model" ]] || { echo "contention.sh: no model file $model" >&2; exit 2; }
[[ -x "$sixstep" ]] || { echo "contention.sh: no sixstep binary at $sixstep (set SIXSTEP=...)" >&2; exit 2; }
[[ -z "$llama" || -x "$llama" ]] || { echo "contention.sh: $llama is not an executable llama-bench or llama_timing" >&2; exit 2; }

hogs=()
stop_hogs() { [[ ${#hogs[@]} -eq 0 ]] || kill "${hogs[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT
n_cpus=$(nproc)
for ((i = 0; i < n_cpus; i++)); do
  (while :; do :; done) &
  hogs+=($!)
done

sixstep_tg() {
  "$sixstep" bench -m "$model" -p 0 -n "$n_gen" -r "$reps" -t "$1" --json |
    python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["results"][0]["tokens_per_s"])'
}
llama_tg() {
  if [[ $(basename "$llama") == llama_timing* ]]; then
    "$llama" "$model" "$1" 0 "$n_gen" "$reps" | awk '/ tg/{printf "%.1f\n", $3}'
  else
    "$llama" -m "$model" -p 0 -n "$n_gen" -r "$reps" -t "$1" -o json 2>/dev/null |
      python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)[0]["avg_ts"])'
  fi
}

echo "decode tg$n_gen of $(basename "$model") beside $n_cpus CPU hogs, tokens/s, $rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
results=()  # "threads sixstep llama" per round and thread count
for ((r = 0; r < rounds; r++)); do
  for t in 1 "$threads"; do
    l=nan
    if [[ -n "$llama" && $((r % 2)) -eq 1 ]]; then l=$(llama_tg "$t"); fi
    s=$(sixstep_tg "$t")
    if [[ -n "$llama" && $((r % 2)) -eq 0 ]]; then l=$(llama_tg "$t"); fi
    results+=("$t $s $l")
  done
done
printf '%s\n' "${results[@]}" | python3 -c '
import math, statistics, sys
rows = {}
for line in sys.stdin:
    t, s, l = line.split()
    rows.setdefault(int(t), []).append((float(s), float(l)))
print("| threads | sixstep (rounds) | llama.cpp (rounds) | ratio (lowest) |")
print("|--------:|-----------------:|-------------------:|---------------:|")
for t, rs in sorted(rows.items()):
    six = statistics.median(s for s, _ in rs)
    if any(math.isnan(l) for _, l in rs):
        print(f"| {t} | {six:.1f} | - | - |")
        continue
    ll = statistics.median(l for _, l in rs)
    ratios = [s / l for s, l in rs]
    print(f"| {t} | {six:.1f} ({min(s for s, _ in rs):.0f}-{max(s for s, _ in rs):.0f}) "
          f"| {ll:.1f} ({min(l for _, l in rs):.0f}-{max(l for _, l in rs):.0f}) "
          f"| {statistics.median(ratios):.2f}x ({min(ratios):.2f}x) |")
'
