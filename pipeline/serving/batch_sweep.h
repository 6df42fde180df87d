// The batch sweep: how decode throughput and time per output token change
// with the number of sequences sharing one forward pass — the experiment
// behind "batching 1 → 64 multiplies throughput while TPOT barely moves",
// measured on this machine with this model.
//
// For each batch size B: B sequences each hold a context of n_context random
// tokens (prefilled once, untimed, and shared by every batch size: the first
// B sequences are used and cut back to n_context after each run); then
// n_steps timed decode steps, each one forward pass carrying one new token
// for each of the B sequences (the shape of llama-batched-bench's text
// generation phase). A run's step time is its total ÷ n_steps, so that
// tokens/s = B · n_steps ÷ total as llama-batched-bench counts them; the
// median over `repetitions` runs is kept. The runs go in rounds (every
// batch size once per round), so a load that comes and goes on the machine
// meets every batch size alike. Each point also carries the bytes
// and FLOPs of its step, and, when the machine's roofs are given, the
// roofline prediction; the knee of tokens/s vs B is found by knee.h.
//
//     BatchSweepParams p;  p.batch_sizes = {1, 2, 4, 8, 16, 32};
//     p.roofs = MachineRoofs{peaks.read_bytes_per_s, peaks.flops_per_s};
//     BatchSweepResult r = run_batch_sweep(backend, p);
//     for (const auto& pt : r.points) plot(pt.n_batch, pt.tokens_per_s);
//     if (r.knee.found) mark(r.knee.x);
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/llm/backend.h"
#include "pipeline/serving/knee.h"
#include "pipeline/serving/roofline.h"

namespace sixstep::serving {

// Where a long sweep is, for a progress line: "prefill" 12 of 64
// sequences, then "round 2 of 3, batch 16" run 10 of 21.
struct SweepProgress {
    std::string stage;
    int done = 0;
    int total = 0;
};

struct BatchSweepParams {
    std::vector<int> batch_sizes = {1, 2, 4, 8, 16, 32, 64};  // sequences per decode step, 1 … 4096 each
    int n_context = 128;     // tokens each sequence holds before the timed steps (prefilled, untimed), >= 1
    int n_steps = 32;        // timed decode steps per run (contexts grow n_context+1 … n_context+n_steps), 1 … 4096
    int repetitions = 3;     // rounds: timed runs per batch size, each after a warm-up step; the median is kept, 1 … 100
    std::uint64_t seed = 1;  // for the random token ids
    std::optional<MachineRoofs> roofs;  // the machine's measured roofs; none → no roofline prediction
    KneeParams knee{.x_name = "batch", .y_unit = "tok/s"};  // acceptance rules for the knee
    std::function<void(const SweepProgress&)> progress;  // called as the sweep advances (may be empty)
};

struct BatchSweepPoint {
    int n_batch = 0;                  // sequences in each step
    double step_ms = 0;               // one decode step (median over runs) = TPOT at this batch size
    std::vector<double> run_step_ms;  // each run's mean step time
    double tokens_per_s = 0;          // n_batch · 1000 ÷ step_ms
    double speedup = 0;               // tokens_per_s ÷ that of the first batch size
    double tpot_ratio = 0;            // step_ms ÷ that of the first batch size
    StepCost cost;                    // bytes and FLOPs of one step, at the runs' mean context
    std::optional<RooflinePrediction> roofline;  // when roofs were given
};

struct BatchSweepResult {
    std::string backend;              // Backend::name()
    int n_context = 0, n_steps = 0, repetitions = 0;
    double mean_context = 0;          // positions attended per sequence, averaged over a run's steps
    DecodeShape shape;                // the model's bytes and weights per step
    std::optional<MachineRoofs> roofs;
    double ridge_batch = 0;           // where the roofs cross at mean_context (infinity: never); 0 without roofs
    std::vector<BatchSweepPoint> points;  // one per batch size, ascending
    KneeResult knee;                  // of tokens/s vs batch size
    std::string knee_method;          // the method and its rules, in words
    double prefill_s = 0;             // untimed setup, measured anyway
    double sweep_s = 0;               // wall time of the whole sweep
    double cpu_wait_ms = 0;           // of the steps timed, waiting for a CPU: left out of their times (cpu_wait.h)
};

// The KV cache one step reads at the sweep's largest batch, as a multiple of
// the weights it reads: grows with batch × context, the weights do not
// (0 for an empty sweep).
double kv_to_weights_at_largest(const BatchSweepResult& r);

// Throws sixstep::Error for what run_batch_sweep would refuse (batch sizes,
// steps, repetitions, a context the model cannot hold), before anything is
// allocated or measured.
void check_batch_sweep_params(const llm::Backend& backend, const BatchSweepParams& p);

// Throws sixstep::Error for bad parameters, before any work: batch sizes out
// of range or repeated, a context that does not fit the model, or a KV cache
// larger than half this machine's memory.
BatchSweepResult run_batch_sweep(llm::Backend& backend, const BatchSweepParams& params);

// Times n_steps decode steps of n_seq sequences at a context of n_context
// random tokens (prefilled untimed, after one warm-up step): each step's
// forward pass in ms, less the wait for a CPU. The service times of the
// queueing simulation.
std::vector<double> measure_decode_steps(llm::Backend& backend, int n_seq, int n_context, int n_steps,
                                         std::uint64_t seed = 1);

}  // namespace sixstep::serving
