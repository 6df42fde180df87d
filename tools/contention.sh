#!/usr/bin/env bash
# Decode beside CPU hogs, sixstep and llama.cpp side by side in one run.
#
#   tools/contention.sh MODEL.gguf [LLAMA_BENCH] [THREADS] [N_GEN] [REPS]
#
# LLAMA_BENCH is llama.cpp's llama-bench, or a build of tools/llama_timing.cpp
# (any executable named llama_timing*) where llama-bench is not at hand.
# Starts one busy-looping shell per CPU (normal priority, like a build or a
# browser tab), then runs the decode test (tgN_GEN, median of REPS) of
# `sixstep bench` and, when LLAMA_BENCH is given, of llama.cpp's llama-bench
# on 1 thread and on THREADS threads, alternating the engines so that both
# see the same machine. Run it at normal priority: under chrt the engines
# would be immune to the hogs. `sixstep bench --contention` measures sixstep
# alone, quiet and hogged.
set -euo pipefail
model=${1:?usage: tools/contention.sh MODEL.gguf [LLAMA_BENCH] [THREADS] [N_GEN] [REPS]}
llama=${2:-}
threads=${3:-2}
n_gen=${4:-128}
reps=${5:-5}
sixstep=${SIXSTEP:-$(dirname "$0")/../build/release/sixstep}
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

echo "decode tg$n_gen of $(basename "$model") beside $n_cpus CPU hogs, tokens/s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| threads | sixstep | llama.cpp |"
echo "|--------:|--------:|----------:|"
for t in 1 "$threads"; do
  s=$(sixstep_tg "$t")
  l=-
  [[ -z "$llama" ]] || l=$(llama_tg "$t")
  echo "| $t | $s | $l |"
done
