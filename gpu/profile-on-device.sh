#!/usr/bin/env bash
# Where a decode step's time goes on the GPU: every kernel of a few decode
# steps timed by Nsight Compute (ncu), each kernel's time and bytes read from
# device memory, summed by kernel and launch size, per decoded token. Kernels
# launched one by one (SIXSTEP_CUDA_GRAPHS=off), so that ncu sees each.
#     bash gpu/device-prebuild.sh                                  # here
#     device run: bash gpu/profile-on-device.sh [PRESET] [TYPE]    # carry [".device-prebuilt"]
# Defaults: 1b f16 (TinyLlama's shape, random weights). Writes
# $OUT/profile-PRESET-TYPE.txt (the table) and .csv (ncu's rows).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/build/device-out}"
mkdir -p "$out"
preset=${1:-1b} type=${2:-f16}
. gpu/prebuilt-env.sh
use_prebuilt_programs || { echo "profile: $prebuilt_why (run gpu/device-prebuild.sh here first)"; exit 1; }
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "profile: no ncu here"; exit 1; }
model=/tmp/profile-$preset-$type.gguf
"$sixstep" bench --random "$preset" --type "$type" --out "$model" --force >/dev/null || exit 1
tokens=${SIXSTEP_PROFILE_TOKENS:-4}
csv="$out/profile-$preset-$type.csv"
# bench runs a warm-up and then -r runs of -n tokens each: 2 × tokens steps.
SIXSTEP_CUDA_GRAPHS=off timeout 300 "$ncu" --csv --print-units base --clock-control none \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size \
    "$sixstep" bench -m "$model" --backend cuda -p 0 -n "$tokens" -r 1 >"$csv" 2>"$out/profile-ncu.log" ||
    { echo "profile: ncu failed:"; tail -20 "$out/profile-ncu.log"; exit 1; }
python3 - "$csv" "$((2 * tokens))" "$preset" "$type" <<'PY' | tee "$out/profile-$preset-$type.txt"
import csv, io, sys, collections
text = open(sys.argv[1]).read()
rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"'):])))
steps = int(sys.argv[2])
k = collections.defaultdict(lambda: {"ns": 0.0, "bytes": 0.0, "n": 0})
def short(name):  # "void ns::(anonymous namespace)::f<(T)1, (int)1>(args)" → "f<(T)1, (int)1>"
    name = name.replace("(anonymous namespace)::", "").removeprefix("void ")
    depth = 0
    for i, c in enumerate(name):
        depth += c == "<"
        depth -= c == ">"
        if c == "(" and depth == 0:
            name = name[:i]
            break
    return name.split("::")[-1] if "<" not in name else name[name.rfind("::", 0, name.index("<")) + 2:]
value = lambda r: float(r["Metric Value"].replace(",", ""))
for r in rows:
    kern = k[(short(r["Kernel Name"]), r.get("Grid Size", ""), "")]
    if r["Metric Name"] == "gpu__time_duration.sum": kern["ns"] += value(r); kern["n"] += 1
    elif r["Metric Name"] == "dram__bytes_read.sum": kern["bytes"] += value(r)
total = sum(v["ns"] for v in k.values())
print(f"# {sys.argv[3]} {sys.argv[4]}: {len(rows)} rows; {steps} decode steps (plus any upload kernels); "
      f"GPU time per step {total / steps / 1e3:.1f} µs")
print(f"{'kernel':52s} {'grid':>16s} {'calls/step':>10s} {'µs/step':>9s} {'µs/call':>8s} {'share':>6s} {'GB/s':>7s}")
for (name, grid, _), v in sorted(k.items(), key=lambda kv: -kv[1]["ns"]):
    bw = v["bytes"] / v["ns"] if v["ns"] else 0
    print(f"{name[:52]:52s} {grid[:16]:>16s} {v['n'] / steps:10.1f} {v['ns'] / steps / 1e3:9.1f} "
          f"{v['ns'] / max(v['n'], 1) / 1e3:8.2f} {v['ns'] / total:6.1%} {bw:7.0f}")
PY
