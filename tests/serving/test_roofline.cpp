// Roofline arithmetic on typed inputs, to the last bit where the numbers
// allow it, and the shape of a real (random-weight) model counted by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "error_of.h"
#include "temp_dir.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/serving/roofline.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep::serving;
using sixstep::test::error_of;

namespace {
DecodeShape typed_shape() {
    DecodeShape s;
    s.weight_bytes = 1000;
    s.matmul_weights = 200;
    s.embd_row_bytes = 10;
    s.kv_bytes_per_token = 4;
    s.n_layer = 2;
    s.n_head = 3;
    s.head_dim = 5;
    return s;
}
}  // namespace

TEST_CASE("roofline: bytes and FLOPs of a decode step") {
    const StepCost c = decode_step_cost(typed_shape(), 4, 6.5);
    CHECK(c.n_seq == 4);
    CHECK(c.weight_bytes == 1000);          // once, whatever the batch
    CHECK(c.embd_bytes == 40);              // 4 rows of 10
    CHECK(c.kv_bytes == 104);               // 4 sequences · 6.5 positions · 4 bytes
    CHECK(c.bytes == 1144);
    CHECK(c.matmul_flops == 1600);          // 2 · 200 · 4
    CHECK(c.attention_flops == 3120);       // 4 · 2 layers · 3 heads · 5 · 6.5 · 4
    CHECK(c.flops == 4720);
    // One sequence more adds its own bytes and FLOPs, never the weights again.
    const StepCost d = decode_step_cost(typed_shape(), 5, 6.5);
    CHECK(d.bytes - c.bytes == 10 + 26);
    CHECK(d.flops - c.flops == 400 + 780);
}

TEST_CASE("roofline: the prediction is the larger of the two roofs") {
    const StepCost c = decode_step_cost(typed_shape(), 4, 6.5);
    const RooflinePrediction p = predict_roofline(c, {.bytes_per_s = 1e6, .flops_per_s = 2e6});
    CHECK(p.memory_ms == doctest::Approx(1.144).epsilon(1e-15));
    CHECK(p.compute_ms == doctest::Approx(2.36).epsilon(1e-15));
    CHECK(p.predicted_ms == p.compute_ms);
    CHECK(p.compute_bound);
    CHECK(p.arithmetic_intensity == 4720.0 / 1144.0);
    CHECK(p.ridge_intensity == 2);
    // A machine with a hundred times the FLOPs: now the bytes decide.
    const RooflinePrediction q = predict_roofline(c, {.bytes_per_s = 1e6, .flops_per_s = 2e8});
    CHECK_FALSE(q.compute_bound);
    CHECK(q.predicted_ms == q.memory_ms);
}

TEST_CASE("roofline: the ridge batch is where the roofs cross") {
    const MachineRoofs roofs{.bytes_per_s = 1e6, .flops_per_s = 2e6};
    // Per sequence 36 bytes and 1180 FLOPs: B = (1000/1e6) / (1180/2e6 − 36/1e6).
    const double b = ridge_batch(typed_shape(), 6.5, roofs);
    CHECK(b == doctest::Approx(1e-3 / (1180 / 2e6 - 36 / 1e6)).epsilon(1e-14));
    // At a fractional batch the formula is still linear: both roofs agree there.
    const double mem = (1000 + 36 * b) / 1e6, comp = 1180 * b / 2e6;
    CHECK(mem == doctest::Approx(comp).epsilon(1e-14));
    // KV reads growing faster than the FLOPs: never compute-bound.
    DecodeShape heavy = typed_shape();
    heavy.kv_bytes_per_token = 1000;
    CHECK(std::isinf(ridge_batch(heavy, 6.5, roofs)));
}

TEST_CASE("roofline: roofs must be positive numbers") {
    const StepCost c = decode_step_cost(typed_shape(), 1, 1);
    CHECK(error_of([&] { predict_roofline(c, {.bytes_per_s = 0, .flops_per_s = 1}); }) ==
          "roofline: memory bandwidth must be a positive number of bytes/s, not 0");
    CHECK(error_of([&] { predict_roofline(c, {.bytes_per_s = 1, .flops_per_s = NAN}); }) ==
          "roofline: peak FLOP/s must be a positive number, not nan");
}

TEST_CASE("roofline: a model's shape, counted by hand") {
    using namespace sixstep::llm;
    RandomModelParams rp;  // n_vocab 512, n_embd 64, 2 layers, 4 heads, 2 KV heads, n_ff 128
    rp.n_vocab = 512, rp.n_embd = 64, rp.n_layer = 2, rp.n_head = 4, rp.n_head_kv = 2, rp.n_ff = 128;
    rp.type = sixstep::llm::GGMLType::F32;
    const auto path = sixstep::test::process_temp_dir("serving") / "shape.gguf";
    write_random_model(path, rp);
    const DecodeShape s = decode_shape(*LlamaModel::load(path));
    // Per layer: q 64×64, k and v 32×64 each, output 64×64, gate and up 128×64, down 64×128.
    const std::uint64_t per_layer = 4096 + 2048 + 2048 + 4096 + 8192 + 8192 + 8192;
    CHECK(s.matmul_weights == 2 * per_layer + 512 * 64);  // plus the output head
    CHECK(s.weight_bytes == 4 * s.matmul_weights + 4 * (2 * 2 * 64 + 64));  // F32, and the three kinds of norm
    CHECK(s.embd_row_bytes == 64 * 4);
    CHECK(s.kv_bytes_per_token == 2 * 2 * 32 * 4);  // K and V, 2 layers, 2 heads of 16, floats
    CHECK(s.n_layer == 2);
    CHECK(s.n_head == 4);
    CHECK(s.head_dim == 16);
}
