#!/usr/bin/env bash
# One build for every x86-64 machine: runs this build's binaries on a CPU that
# qemu emulates (user mode, no virtual machine), one without the instructions
# of the machine that built them. The release build picks its kernels at run
# time (pipeline/llm/cpu/cpu_simd.h); what this catches and a native run
# cannot is an instruction the CPU lacks outside the kernels of its level —
# an inline function that one of the AVX2 or AVX-512 sources compiled and the
# linker kept for everyone, a library call built for a newer CPU — which ends
# a student's run with SIGILL on an older laptop.
#
#   tests/portable/on_emulated_cpu.sh CPU LEVEL TEST_LLM SIXSTEP SOURCE_DIR
#
# CPU is a qemu CPU model, LEVEL the best kernel level sixstep must find on
# it (scalar for the x86-64 baseline, avx2 for Haswell). Checks, in order:
# the kernel and golden-logit tests of test_llm (every level the CPU has
# against the scalar one and against PyTorch's logits); greedy generation
# of the bundled model on LEVEL; lessons 01 (delivery model) and 04 (the
# transformer) pass their checks; asking for a level above LEVEL is refused
# with a message, not an illegal instruction. Exit 77 (CTest: skipped) where
# qemu-x86_64 is missing or the host is not x86-64.
set -uo pipefail
cpu=$1 level=$2 test_llm=$3 sixstep=$4 src=$5

if [ "$(uname -m)" != x86_64 ]; then echo "portable test skipped: the host is $(uname -m), not x86-64"; exit 77; fi
qemu=$(command -v qemu-x86_64) || { echo "portable test skipped: qemu-x86_64 not found (Debian: qemu-user)"; exit 77; }
run() { "$qemu" -cpu "$cpu" "$@"; }
fail() { echo "FAILED on $cpu: $*"; exit 1; }
cd "$src" || exit 1

echo "== test_llm's kernel and golden tests on $cpu"
SIXSTEP_TEST_CPU_LEVEL=$level run "$test_llm" -tc="cpu levels*,kernels*,golden*" || fail "test_llm"

echo "== greedy generation on $cpu"
out=$(run "$sixstep" generate -m assets/models/stories-3m-f16.gguf --prompt "The cat sat on the" -n 8 2>&1) ||
  fail "generate exited $?: $out"
echo "$out"
grep -q "^The cat sat on the mat\." <<<"$out" || fail "the bundled model did not continue with \" mat.\""
grep -q "cpu ([0-9]* threads*, $level)" <<<"$out" || fail "the backend is not the $level one"

echo "== lessons 01 and 04 on $cpu"
run "$sixstep" check --attempts 3 lessons/01-six-steps.yaml lessons/04-one-token-at-a-time.yaml || fail "sixstep check"

case $level in
  scalar) above=avx2 ;;
  avx2) above=avx512 ;;
  *) above= ;;
esac
if [ -n "$above" ]; then
  echo "== SIXSTEP_CPU=$above on $cpu is refused"
  out=$(SIXSTEP_CPU=$above run "$sixstep" generate -m assets/models/stories-3m-f16.gguf --prompt "The cat" -n 1 2>&1)
  rc=$?
  echo "$out (exit $rc)"
  [ "$rc" -eq 2 ] || fail "SIXSTEP_CPU=$above exited $rc, not 2"
  grep -q "SIXSTEP_CPU=$above: this CPU cannot run it" <<<"$out" || fail "no message for SIXSTEP_CPU=$above"
fi
echo "portable: $cpu runs this build on its $level kernels"
