#!/usr/bin/env bash
# `sixstep serve` and llama.cpp's `llama-server` on the same GGUF, both driven
# by the same `sixstep load` (same seed: same arrival times and prompts).
#
#   tools/serve-side-by-side.sh MODEL.gguf "RATES" DURATION MAX_TOKENS OUT_DIR
#
# For each rate, each server in turn is started on loopback (one CPU thread,
# 8 sequences at once, continuous batching), loaded for DURATION seconds,
# then stopped with SIGINT; the load generator's JSON goes to
# OUT_DIR/load-{sixstep,llama}-RATE.json and a markdown table is printed.
# SIXSTEP and LLAMA_SERVER name the binaries (defaults: build/release/sixstep
# and llama-server on PATH).
set -uo pipefail
usage="usage: tools/serve-side-by-side.sh MODEL.gguf \"RATES\" DURATION MAX_TOKENS OUT_DIR"
model=${1:?$usage}; rates=${2:?$usage}; duration=${3:?$usage}; max_tokens=${4:?$usage}; out=${5:?$usage}
sixstep=${SIXSTEP:-$(dirname "$0")/../build/release/sixstep}
llama=${LLAMA_SERVER:-$(command -v llama-server || true)}
[[ -f "$model" ]] || { echo "serve-side-by-side.sh: no model file $model" >&2; exit 2; }
[[ -x "$sixstep" ]] || { echo "serve-side-by-side.sh: no sixstep binary at $sixstep (set SIXSTEP=...)" >&2; exit 2; }
[[ -n "$llama" && -x "$llama" ]] || { echo "serve-side-by-side.sh: no llama-server (set LLAMA_SERVER=...)" >&2; exit 2; }
mkdir -p "$out"

server=""
stop_server() { [[ -z "$server" ]] || { kill -INT "$server" 2>/dev/null; wait "$server" 2>/dev/null; server=""; }; }
trap stop_server EXIT
wait_healthy() {
  for _ in $(seq 1 300); do curl -sf "$1/health" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

for rate in $rates; do
  for who in sixstep llama; do
    if [[ $who == sixstep ]]; then
      url=http://127.0.0.1:18080
      "$sixstep" serve -m "$model" --port 18080 -t 1 --max-batch 8 >"$out/server-$who-$rate.log" 2>&1 &
    else
      url=http://127.0.0.1:18081
      "$llama" -m "$model" --host 127.0.0.1 --port 18081 -np 8 -c 4096 -t 1 >"$out/server-$who-$rate.log" 2>&1 &
    fi
    server=$!
    wait_healthy "$url" || { echo "$who did not come up: see $out/server-$who-$rate.log" >&2; stop_server; continue; }
    "$sixstep" load --url "$url" --rate "$rate" --duration "$duration" --max-tokens "$max_tokens" \
      --temperature 0 --seed 7 --json >"$out/load-$who-$rate.json" 2>"$out/load-$who-$rate.err"
    echo "$who at $rate req/s: load exit $?, load average $(cut -d' ' -f1 /proc/loadavg)" >&2
    stop_server
  done
done

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rates = sorted({float(os.path.basename(f)[:-5].split("-")[2]) for f in glob.glob(out + "/load-*.json")})
print("| rate (req/s) | server | sent | failed | TTFT p50 | TTFT p99 | TPOT p50 | ITL p99 | E2E p50 | completed req/s | output tok/s |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rates:
    for who, name in (("sixstep", "sixstep serve"), ("llama", "llama-server")):
        try:
            j = json.load(open(f"{out}/load-{who}-{r:g}.json"))
        except (OSError, ValueError):
            print(f"| {r:g} | {name} | no result |"); continue
        lat = {x["key"]: x for x in j["latencies"]}
        tot = {x["key"]: x["value"] for x in j["totals"]}
        ms = lambda k, p: f"{lat[k][p]:.1f}" if k in lat and lat[k].get(p) is not None else "–"
        print(f"| {r:g} | {name} | {tot['requests']:.0f} | {tot['failed']:.0f} | {ms('ttft', 'p50')} | {ms('ttft', 'p99')} "
              f"| {ms('tpot', 'p50')} | {ms('itl', 'p99')} | {ms('e2e', 'p50')} | {tot['request_throughput']:.1f} | {tot['output_throughput']:.0f} |")
PY
