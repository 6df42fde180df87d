// The roofline of one decode step: a step cannot be faster than the time to
// move its bytes at the machine's memory bandwidth, nor than the time to do
// its arithmetic at the machine's peak FLOP/s; the prediction is the larger.
//
// A decode step of a batch of B sequences, each attending to c positions:
//   bytes = weights (read once, whatever B)
//         + B · embedding row                      (each sequence's new token)
//         + B · c · KV bytes per position          (K and V of every layer)
//   FLOPs = B · 2 · matmul weights                 (one multiply-add per weight per token)
//         + B · 4 · n_layer · n_head · head_dim · c   (q·k and the weighted sum of v)
// At small B the weights dominate and the step is memory-bound: B tokens cost
// about as much as one. As B grows the FLOPs catch up; past the ridge batch
// the step is compute-bound and throughput stops growing — the knee.
//
//     DecodeShape s = decode_shape(model);
//     StepCost c = decode_step_cost(s, 32, 160);
//     RooflinePrediction p = predict_roofline(c, {.bytes_per_s = 28e9, .flops_per_s = 190e9});
//     p.predicted_ms, p.compute_bound
#pragma once
#include <cstdint>

namespace sixstep::llm {
class LlamaModel;
}

namespace sixstep::serving {

// What one decode step of a model reads and computes, per token and per step.
struct DecodeShape {
    std::uint64_t weight_bytes = 0;        // every matrix a step multiplies by (all layers and the output head) plus the norms: read once per step
    std::uint64_t matmul_weights = 0;      // elements of those matrices: multiply-adds per token
    std::uint64_t embd_row_bytes = 0;      // one token's embedding row, read once per sequence
    std::uint64_t kv_bytes_per_token = 0;  // K and V of one position, all layers
    int n_layer = 0;                       // transformer blocks
    int n_head = 0;                        // query heads
    int head_dim = 0;                      // floats per head
};

// The shape of a model as the engine runs it; the KV bytes per position are
// what the engine's own cache reports for this model (KvCacheStats).
DecodeShape decode_shape(const llm::LlamaModel& model);

// One decode step: n_seq sequences, each attending to `context` positions
// (the new one included; a mean when contexts differ — every term is linear).
struct StepCost {
    int n_seq = 0;
    double context = 0;
    double weight_bytes = 0;     // read once per step
    double embd_bytes = 0;       // n_seq embedding rows
    double kv_bytes = 0;         // n_seq · context · KV bytes per position
    double bytes = 0;            // the three together
    double matmul_flops = 0;     // 2 · matmul weights · n_seq
    double attention_flops = 0;  // 4 · n_layer · n_head · head_dim · context · n_seq
    double flops = 0;            // the two together
};
StepCost decode_step_cost(const DecodeShape& shape, int n_seq, double context);

// The machine's two roofs, measured (see tools/machine_peaks.h).
struct MachineRoofs {
    double bytes_per_s = 0;  // memory read bandwidth
    double flops_per_s = 0;  // peak floating-point operations per second
};

struct RooflinePrediction {
    double memory_ms = 0;            // bytes ÷ bandwidth
    double compute_ms = 0;           // FLOPs ÷ peak FLOP/s
    double predicted_ms = 0;         // the larger of the two
    bool compute_bound = false;      // compute_ms > memory_ms
    double arithmetic_intensity = 0; // FLOPs per byte of this step
    double ridge_intensity = 0;      // FLOPs per byte where the roofs meet (peak ÷ bandwidth)
};
// Throws sixstep::Error when a roof is not a positive finite number.
RooflinePrediction predict_roofline(const StepCost& cost, const MachineRoofs& roofs);

// The batch size at which a step at this context turns compute-bound (the
// roofs' crossing, as a real number); infinity when it never does (the KV
// reads grow as fast as the FLOPs).
double ridge_batch(const DecodeShape& shape, double context, const MachineRoofs& roofs);

}  // namespace sixstep::serving
