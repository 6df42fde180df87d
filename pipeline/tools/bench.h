// Throughput measurement in the spirit of llama-bench: prefill (pp) and
// decode (tg) tokens per second on a backend, median of repeats. A product
// feature (`sixstep bench`, the serving lessons), never a test assertion.
//
//     BenchParams p;  p.n_prompt = 128;  p.n_gen = 128;
//     BenchResult r = run_bench(cpu, p);
//     r.prefill.median_tok_s, r.decode.median_tok_s
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/observer.h"

namespace sixstep::llm {

struct BenchParams {
    int n_prompt = 128;   // prefill test: tokens in one batch (0 → skip)
    int n_gen = 128;      // decode test: tokens generated one at a time (0 → skip)
    int repetitions = 5;  // timed runs per test (after one warm-up run)
    bool warm_up = true;  // false: no warm-up run (the caller has just run the same test)
    std::uint64_t seed = 1;  // for the random token ids
    TensorObserver* observer = nullptr;  // offered every pass's tensors (null: none, the fast path)
};

struct BenchTest {
    std::string name;               // "pp128", "tg128"
    int n_tokens = 0;
    std::vector<double> tok_s;      // one per repetition
    double median_tok_s = 0;
    double median_ms = 0;           // of the whole test
};

struct BenchResult {
    BenchTest prefill, decode;
};

// Throws sixstep::Error when the tests do not fit in the model's context.
BenchResult run_bench(Backend& backend, const BenchParams& params);

// (decode_weight_bytes, the bytes a decode step reads, is in llama_model.h.)

}  // namespace sixstep::llm
