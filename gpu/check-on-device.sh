#!/usr/bin/env bash
# Everything about the CUDA backend that needs a GPU, in one call on a GPU
# machine (42 s on an H200 with the carried programs, 2026-12-04; building
# there adds a few minutes; every step has its own time limit so the whole
# stays under 9):
#   1. configure and build only what the checks need (no GUI, sm_90 only), or
#      use the programs carried in .device-prebuilt;
#   2. the GPU test suite (tests/gpu) and the backend-ops test (every named
#      tensor of every backend against the reference, by NMSE), with
#      SIXSTEP_REQUIRE_GPU=1 so that a missing GPU fails instead of skipping;
#   3. a smoke run of `sixstep generate --backend cuda` and `--backend auto`;
#   4. device memory bandwidth (gpu/tools/bandwidth.cu);
#   5. `sixstep bench --backend cuda` on random-weight models, 110M (llama2.c's
#      shape) and 1.1B (TinyLlama's), f16 and q8_0: decode tokens/s against
#      the bound bandwidth ÷ weight bytes per token, and prefill tokens/s;
#      then batched decode 1→64 on the 1.1B f16 model (`bench --batch`).
# Results go to $OUT/gpu-check.txt, one line per step and figure; the full
# output to $OUT/gpu-check.log. Exit status 0 only when every step passed.
#
# Two ways to bring the programs:
#     bash gpu/device-prebuild.sh               # here: build them, pack them with their libraries
#     device run: bash gpu/check-on-device.sh   # carry [".device-prebuilt"]: step 1 only checks they start
# or build them there (the device image has nvcc, CMake and ninja):
#     bash gpu/device-deps.sh                   # here: the Debian libraries the device image may lack
#     device run: bash gpu/check-on-device.sh   # carry [".device-deps"], timeout_s 600
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/build/device-out}"
mkdir -p "$out"
results="$out/gpu-check.txt"
log="$out/gpu-check.log"
: >"$results"
: >"$log"
build=build/device
jobs=$(nproc 2>/dev/null || echo 16)
failed=0
start=$(date +%s)

say() { echo "$*" | tee -a "$results"; }
# step NAME SECONDS COMMAND…: runs it with a time limit, output to the log.
step() {
    local name=$1 limit=$2
    shift 2
    local t0 rc
    t0=$(date +%s)
    echo "==== $name: $*" >>"$log"
    timeout "$limit" "$@" >>"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        say "ok    $name ($(($(date +%s) - t0)) s)"
    else
        say "FAIL  $name (exit $rc$([ $rc -eq 124 ] && echo ", over ${limit} s"), $(($(date +%s) - t0)) s; see gpu-check.log)"
        failed=1
    fi
    return $rc
}

# The tree's commit as git sees it there (a device copy's git may be older
# than its files: the carried programs name the commit they were built from).
say "# sixstep GPU check, $(date -u +%Y-%m-%dT%H:%MZ), tree at commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
say "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | head -1)"
say "nvcc: $(nvcc --version 2>&1 | tail -1)"
say "host: $(g++ --version 2>&1 | head -1); $(cmake --version 2>&1 | head -1); $(nproc) cores"

# ---- 1. configure and build, or the carried programs ----------------------------
. gpu/prebuilt-env.sh
use_prebuilt() {
    if ! use_prebuilt_programs; then
        [ -d "$prebuilt" ] && say "prebuilt: $prebuilt_why; building instead"
        return 1
    fi
    step prebuilt-start 30 "$sixstep" --version || return 1
    say "prebuilt: $(tr '\n' ' ' <"$prebuilt/commit")from $prebuilt_source, $(ls "$prebuilt/lib" | wc -l) libraries carried"
}
build_here() {
    cmake_args=(-DCMAKE_BUILD_TYPE=Release -DSIXSTEP_BUILD_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES=90)
    command -v ninja >/dev/null && cmake_args+=(-G Ninja)
    if [ -d .device-deps/root/usr ]; then
        deps="$PWD/.device-deps/root/usr"
        cmake_args+=("-DCMAKE_PREFIX_PATH=$deps")
        export LD_LIBRARY_PATH="$deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        say "deps: carried .device-deps ($deps)"
    fi
    [ -x /usr/local/cuda/bin/nvcc ] && cmake_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
    if ! step configure 120 cmake -S . -B "$build" "${cmake_args[@]}"; then
        say "configure failed: is .device-deps carried? (bash gpu/device-deps.sh)"
        exit 1
    fi
    if ! grep -q "✓ CUDA" "$log"; then
        say "FAIL  configure did not build the CUDA backend:"
        grep -E "CUDA|cuda" "$log" | tee -a "$results"
        exit 1
    fi
    step build 360 cmake --build "$build" -j "$jobs" --target test_gpu test_llm sixstep sixstep-cuda-bandwidth || exit 1
    test_gpu="$build/tests/test_gpu" test_llm="$build/tests/test_llm" sixstep="$build/sixstep"
    bandwidth="$build/gpu/sixstep-cuda-bandwidth"
}
use_prebuilt || build_here

# ---- 2. tests --------------------------------------------------------------------
export SIXSTEP_REQUIRE_GPU=1
figures() {  # the MESSAGE lines (figures) of the last test run, from the log
    sed -n "/^==== $1:/,\$p" "$log" | grep -E "maxdiff|NMSE|relative error|backend:|weights on|→|runs out|graphs:|FAILED|ERROR" |
        sed 's/^.*MESSAGE:[[:space:]]*//' | sed 's/^/      /' | tee -a "$results" >/dev/null
}
# Twice: every kernel launched on its own, then decode through CUDA graphs
# (the default), so that a fault in either shows as its own step.
SIXSTEP_CUDA_GRAPHS=off step gpu-tests-no-graphs 180 "$test_gpu"
figures gpu-tests-no-graphs
step gpu-tests 180 "$test_gpu"
figures gpu-tests
step backend-ops 120 "$test_llm" "--test-case=backend ops*"
figures backend-ops
if grep -q "MESSAGE: .* skipped" <(sed -n '/^==== backend-ops:/,$p' "$log"); then
    say "FAIL  backend-ops skipped a backend:"
    sed -n '/^==== backend-ops:/,$p' "$log" | grep "MESSAGE: .* skipped" | tee -a "$results"
    failed=1
fi

# ---- 3. the CLI on the GPU -------------------------------------------------------
step generate-cuda 60 "$sixstep" generate -m assets/models/stories-3m-f16.gguf --prompt "The cat sat on the" -n 24 \
    --temp 0 --backend cuda
sed -n '/^==== generate-cuda:/,$p' "$log" | tail -n +2 | head -3 | sed 's/^/      /' >>"$results"
step generate-auto 60 "$sixstep" generate -m assets/models/stories-3m-q8_0.gguf --prompt "Once upon a time" -n 24 \
    --temp 0 --backend auto --json
grep -o '"backend": "[^"]*"' "$log" | tail -1 | sed 's/^/      /' >>"$results"

# ---- 4. device memory bandwidth --------------------------------------------------
step bandwidth 60 "$bandwidth" --mib 4096 --reps 20
read_gb_s=$(sed -n '/^==== bandwidth:/,$p' "$log" | sed -n 's/^read_gb_s: //p' | tail -1)
copy_gb_s=$(sed -n '/^==== bandwidth:/,$p' "$log" | sed -n 's/^copy_gb_s: //p' | tail -1)
say "      read ${read_gb_s:-?} GB/s (a kernel streaming 4 GiB), copy ${copy_gb_s:-?} GB/s (cudaMemcpy device to device, read + write)"

# ---- 5. benchmark ----------------------------------------------------------------
models=/tmp/sixstep-bench
mkdir -p "$models"
pids=()
presets=${SIXSTEP_BENCH_PRESETS:-110m 1b}  # a dry run on a machine without a GPU may pick fewer
for preset in $presets; do
    for type in f16 q8_0; do  # written in parallel: the 1.1B ones take the longest
        timeout 240 "$sixstep" bench --random "$preset" --type "$type" --out "$models/$preset-$type.gguf" >>"$log" 2>&1 &
        pids+=($!)
    done
done
t0=$(date +%s)
for p in "${pids[@]}"; do wait "$p" || { say "FAIL  writing a random model (see gpu-check.log)"; failed=1; }; done
say "ok    random models written ($(($(date +%s) - t0)) s)"
say "# bench: decode tg128 from an empty context, prefill pp512; median of 5 runs after a warm-up"
say "# bound = read bandwidth / weight bytes per decoded token (KV cache reads come on top: small at these lengths)"
for preset in $presets; do
    for type in f16 q8_0; do
        model="$models/$preset-$type.gguf"
        [ -f "$model" ] || continue
        json="$out/bench-$preset-$type.json"
        if step "bench $preset $type" 120 "$sixstep" bench -m "$model" --backend cuda -p 512 -n 128 -r 5 --json; then
            sed -n "/^==== bench $preset $type:/,\$p" "$log" | sed -n '/^{/,/^}/p' >"$json"
            python3 - "$json" "${read_gb_s:-0}" <<'PY' | tee -a "$results"
import json, sys
j = json.load(open(sys.argv[1])); bw = float(sys.argv[2]) * 1e9
r = {t["test"]: t["tokens_per_s"] for t in j["results"]}
wb = j["decode_weight_bytes"]; tg = r.get("tg128", 0); pp = r.get("pp512", 0)
bound = bw / wb if bw > 0 else 0
frac = f"{tg / bound:.0%} of the bound {bound:.0f} tok/s" if bound else "no bandwidth figure"
print(f"      {j['model'].split('/')[-1]}: {j['n_params']/1e6:.0f} M params, {wb/1e9:.3f} GB of weights per token; "
      f"decode {tg:.1f} tok/s = {frac}; prefill {pp:.0f} tok/s  [{j['backend']}]")
PY
            # The same decode with every kernel launched on its own.
            if SIXSTEP_CUDA_GRAPHS=off step "bench $preset $type, no graphs" 60 "$sixstep" bench -m "$model" \
                --backend cuda -p 0 -n 128 -r 5 --json; then
                sed -n "/^==== bench $preset $type, no graphs:/,\$p" "$log" | sed -n '/^{/,/^}/p' >"$out/nographs.json"
                python3 - "$json" "$out/nographs.json" <<'PY' | tee -a "$results"
import json, sys
tg = lambda f: {t["test"]: t["tokens_per_s"] for t in json.load(open(f))["results"]}.get("tg128", 0)
g, d = tg(sys.argv[1]), tg(sys.argv[2])
print(f"      without graphs: decode {d:.1f} tok/s; with them {g / d:.2f}×" if d else "      without graphs: no figure")
PY
                rm -f "$out/nographs.json"
            fi
        fi
    done
done
# Batched decode: one token for each of B sequences per step; the article's
# ~34× tokens/s at batch 64 is the figure to compare against.
sweep_model="$models/${presets##* }-f16.gguf"
if [ -f "$sweep_model" ] && step "batch sweep" 150 "$sixstep" bench -m "$sweep_model" --backend cuda \
    --batch 1,2,4,8,16,32,64 --context 128 --steps 32 -r 3; then
    sed -n '/^==== batch sweep:/,$p' "$log" | grep -E '^\| +[0-9]|knee' | sed 's/^/      /' | tee -a "$results" >/dev/null
fi
rm -rf "$models"

say "# done in $(($(date +%s) - start)) s: $([ $failed -eq 0 ] && echo "every step passed" || echo "SOME STEPS FAILED")"
exit $failed
