// The forward pass against an independent numpy reference, and the fast path
// against the reference path. Every comparison prints its maxdiff.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pipeline/core/aligned.h"
#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/cpu/cpu_simd.h"
#include "pipeline/llm/cpu/forward.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace forward_test {

namespace {

const fs::path reference_dir = fs::path(SIXSTEP_TEST_DATA) / "reference";

fs::path temp_dir() {
    return sixstep::test::process_temp_dir("forward");
}

// A random model of the given type, written once per process.
std::shared_ptr<LlamaModel> random_model(GGMLType type, bool tied = false) {
    RandomModelParams p = random_model_preset("tiny");
    p.type = type;
    p.tied_output = tied;
    p.n_embd = 128, p.n_head = 4, p.n_head_kv = 2, p.n_ff = 160, p.n_layer = 2, p.n_vocab = 300, p.n_ctx = 96;
    const fs::path path = temp_dir() / fmt::format("tiny-{}{}.gguf", ggml_type_name(type), tied ? "-tied" : "");
    if (!fs::exists(path)) write_random_model(path, p);
    return LlamaModel::load(path);
}

float maxdiff(const float* a, const float* b, std::size_t n) {
    float m = 0;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}
float maxabs(const std::vector<float>& a) {
    float m = 0;
    for (float x : a) m = std::max(m, std::fabs(x));
    return m;
}

std::vector<float> run_reference(const LlamaModel& m, const std::vector<int>& tokens, bool all_logits) {
    KvCache kv({m.hparams().n_layer, m.hparams().n_head_kv, m.hparams().head_dim(), m.hparams().n_ctx});
    const int s = kv.add_sequence();
    Batch b;
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i)
        b.add(tokens[i], i, s, all_logits || i + 1 == static_cast<int>(tokens.size()));
    std::vector<float> logits;
    forward_reference(m, kv, b, logits);
    return logits;
}

std::vector<float> run_fast(const std::shared_ptr<LlamaModel>& m, const std::vector<int>& tokens, bool all_logits,
                            int threads = 2) {
    CpuBackend cpu(m, {threads});
    auto kv = cpu.make_kv_cache();
    const int s = kv->add_sequence();
    Batch b;
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i)
        b.add(tokens[i], i, s, all_logits || i + 1 == static_cast<int>(tokens.size()));
    std::vector<float> logits;
    cpu.forward(*kv, b, logits);
    return logits;
}

}  // namespace

TEST_CASE("forward: both paths reproduce the numpy reference logits, the fast one at every CPU level") {
    std::ifstream in(reference_dir / "expected.json");
    REQUIRE(in.good());
    const nlohmann::json expected = nlohmann::json::parse(in);
    for (const auto& [name, mj] : expected["models"].items()) {
        const auto model = LlamaModel::load(reference_dir / mj["file"].get<std::string>());
        const int n_vocab = mj["n_vocab"];
        REQUIRE(model->hparams().n_vocab == n_vocab);
        for (const auto& run : mj["runs"]) {
            const std::vector<int> tokens = run["tokens"];
            std::vector<float> want;
            for (const auto& row : run["logits"])
                for (const auto& v : row) want.push_back(v.get<float>());
            const auto ref = run_reference(*model, tokens, true);
            REQUIRE(ref.size() == want.size());
            const float d_ref = maxdiff(ref.data(), want.data(), want.size());
            // float32 arithmetic against float64: a few ulps of logits of size ~5.
            CHECK(d_ref < 2e-4f);
            for (CpuSimd level : cpu_simd_levels()) {
                ScopedCpuSimd use(level);
                const auto fast1 = run_fast(model, tokens, true, 1);
                const auto fast2 = run_fast(model, tokens, true, 2);
                REQUIRE(fast2.size() == want.size());
                const float d_fast = maxdiff(fast2.data(), want.data(), want.size());
                const float d_threads = maxdiff(fast1.data(), fast2.data(), want.size());
                MESSAGE(name << " (" << tokens.size() << " tokens, |logit| <= " << maxabs(want) << ", "
                             << std::string(cpu_simd_name(level)) << "): maxdiff reference " << d_ref << ", fast " << d_fast
                             << ", 1 vs 2 threads " << d_threads);
                CHECK(d_fast < 5e-4f);
                CHECK(d_threads == 0.0f);
            }
        }
    }
}

TEST_CASE("forward: fast path matches the reference for every weight type, at every CPU level") {
    // 19 tokens: prefill goes through the GEMM (AVX2, AVX-512; Q8_0 and Q4_0
    // through the tiles of interleaved rows) or the dot products (scalar);
    // the logits of every row are compared.
    const std::vector<int> prompt = {5, 77, 12, 299, 0, 256, 40, 41, 42, 3, 8, 150, 151, 152, 9, 10, 11, 19, 200};
    for (GGMLType type : {GGMLType::F32, GGMLType::F16, GGMLType::Q8_0, GGMLType::Q4_0}) {
        for (bool tied : {false, true}) {
            const auto model = random_model(type, tied);
            const bool quant = type == GGMLType::Q8_0 || type == GGMLType::Q4_0;
            // Once a CPU forward pass is built, quantized matrices that are
            // multiplied carry interleaved rows (interleaved_rows.h); the
            // embedding table, only looked up, does not. Not before: a model
            // only the GPU runs never pays for them.
            const LlamaWeights& w = model->weights();
            CHECK(w.layers[0].wk.interleaved == nullptr);
            CHECK(w.output.interleaved == nullptr);
            const auto ref = run_reference(*model, prompt, true);
            for (CpuSimd level : cpu_simd_levels()) {
                ScopedCpuSimd use(level);
                const auto fast = run_fast(model, prompt, true);
                CHECK((w.layers[0].wk.interleaved != nullptr) == quant);
                CHECK((w.layers.back().ffn_down.interleaved != nullptr) == quant);
                CHECK((w.output.interleaved != nullptr) == quant);
                CHECK(w.token_embd.interleaved == nullptr);
                // Float types: the matrices multiplied are copied, byte for
                // byte, to memory of the backend's own (huge_page_buffer.h).
                for (const WeightMatrix* m : {&w.layers[0].wq, &w.layers.back().ffn_down, &w.output}) {
                    CHECK((m->cpu_copy != nullptr) == !quant);
                    if (m->cpu_copy) {
                        CHECK(reinterpret_cast<std::uintptr_t>(m->cpu_copy) % sixstep::cache_line_bytes == 0);
                        CHECK(std::memcmp(m->cpu_copy, m->data, m->bytes()) == 0);
                    }
                }
                CHECK(w.token_embd.cpu_copy == nullptr);
                REQUIRE(ref.size() == fast.size());
                const float d = maxdiff(ref.data(), fast.data(), ref.size());
                const float scale = maxabs(ref);
                // Float types: the same products in another order. Quantized types:
                // the fast path may also round the activations to 8 bits (Q8_0 blocks).
                const float tol = quant ? 0.03f * scale : 1e-4f * scale;
                MESSAGE(std::string(ggml_type_name(type))
                        << std::string(tied ? " tied" : "") << " (" << std::string(cpu_simd_name(level))
                        << "): maxdiff fast vs reference " << d << " (|logit| <= " << scale << ", tolerance " << tol
                        << ")");
                CHECK(d < tol);
            }
        }
    }
}

TEST_CASE("forward: the CPU's copy of the weights gives the logits of the mapping's rows, bit for bit") {
    // SIXSTEP_WEIGHTS=mapped: F32 and F16 read from the file's mapping, the
    // interleaved rows on plain pages. The copy must change where the bytes
    // are, never what they are.
    const std::vector<int> prompt = {5, 77, 12, 299, 0, 256, 40, 41, 42, 3};
    for (GGMLType type : {GGMLType::F32, GGMLType::F16, GGMLType::Q8_0, GGMLType::Q4_0}) {
        CAPTURE(ggml_type_name(type));
        ::setenv("SIXSTEP_WEIGHTS", "mapped", 1);
        const auto mapped = random_model(type);
        const auto from_mapping = run_fast(mapped, prompt, true);
        CHECK(mapped->weights().layers[0].wq.cpu_copy == nullptr);
        ::unsetenv("SIXSTEP_WEIGHTS");
        const auto copied = random_model(type);
        const auto from_copy = run_fast(copied, prompt, true);
        const bool quant = type == GGMLType::Q8_0 || type == GGMLType::Q4_0;
        CHECK((copied->weights().layers[0].wq.cpu_copy != nullptr) == !quant);
        CHECK(copied->cpu_weights_memory().bytes >= copied->weights().layers[0].wq.bytes());
        REQUIRE(from_copy.size() == from_mapping.size());
        CHECK(std::memcmp(from_copy.data(), from_mapping.data(), from_copy.size() * sizeof(float)) == 0);
    }
    ::setenv("SIXSTEP_WEIGHTS", "paged", 1);
    const auto model = random_model(GGMLType::F32);
    CHECK_THROWS_WITH_AS(model->prepare_for_cpu(), doctest::Contains("SIXSTEP_WEIGHTS=\"paged\""), sixstep::Error);
    ::unsetenv("SIXSTEP_WEIGHTS");
}

TEST_CASE("forward: F16 and Q8_0 logits stay close to F32 on the same weights") {
    const std::vector<int> prompt = {1, 2, 3, 100, 101, 102, 250, 7};
    const auto f32 = run_fast(random_model(GGMLType::F32), prompt, true);
    const float scale = maxabs(f32);
    struct Case {
        GGMLType type;
        float rel_tol;
    };
    for (const Case c : {Case{GGMLType::F16, 0.005f}, Case{GGMLType::Q8_0, 0.03f}, Case{GGMLType::Q4_0, 0.25f}}) {
        const auto other = run_fast(random_model(c.type), prompt, true);
        const float d = maxdiff(f32.data(), other.data(), f32.size());
        MESSAGE(std::string(ggml_type_name(c.type)) << " vs f32: maxdiff " << d << " (|logit| <= " << scale << ", tolerance "
                                       << c.rel_tol * scale << ")");
        CHECK(d < c.rel_tol * scale);
    }
}

TEST_CASE("forward: prefill then decode equals one long prefill, batched sequences equal separate runs") {
    const auto model = random_model(GGMLType::F32);
    CpuBackend cpu(model, {2});
    const std::vector<int> tokens = {9, 8, 7, 6, 5, 4, 3, 2, 1, 40, 50, 60};
    const int n_vocab = model->hparams().n_vocab;

    // One prefill of all tokens, logits everywhere.
    const auto all = run_fast(model, tokens, true);

    // Prefill 5, then decode one at a time.
    auto kv = cpu.make_kv_cache(0, 4, 4);  // small blocks: attention crosses block boundaries
    const int s = kv->add_sequence();
    std::vector<float> logits;
    cpu.forward(*kv, Batch::prefill({tokens.begin(), tokens.begin() + 5}, s), logits);
    float d = maxdiff(logits.data(), all.data() + 4 * n_vocab, n_vocab);
    for (int i = 5; i < static_cast<int>(tokens.size()); ++i) {
        Batch b;
        b.add(tokens[i], i, s, true);
        cpu.forward(*kv, b, logits);
        d = std::max(d, maxdiff(logits.data(), all.data() + static_cast<std::size_t>(i) * n_vocab, n_vocab));
    }
    MESSAGE("prefill + decode vs one prefill: maxdiff " << d);
    CHECK(d < 1e-4f);
    CHECK(kv->n_tokens(s) == static_cast<int>(tokens.size()));

    // Three sequences decoded together in one batch, one token each.
    const std::vector<std::vector<int>> seqs = {{1, 2, 3}, {4, 5, 6, 7, 8}, {9}};
    auto kv2 = cpu.make_kv_cache(0, 4, 4);
    Batch decode;
    for (const auto& sq : seqs) {
        const int id = kv2->add_sequence();
        if (sq.size() > 1) cpu.forward(*kv2, Batch::prefill(std::vector<int>(sq.begin(), sq.end() - 1), id), logits);
        decode.add(sq.back(), static_cast<int>(sq.size()) - 1, id, true);
    }
    cpu.forward(*kv2, decode, logits);
    REQUIRE(logits.size() == seqs.size() * n_vocab);
    float d2 = 0;
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        const auto alone = run_fast(model, seqs[i], false);
        d2 = std::max(d2, maxdiff(logits.data() + i * n_vocab, alone.data(), n_vocab));
    }
    MESSAGE("3 sequences in one decode batch vs separate runs: maxdiff " << d2);
    CHECK(d2 < 1e-4f);
}

TEST_CASE("forward: bad batches are clear errors") {
    const auto model = random_model(GGMLType::F32);
    CpuBackend cpu(model, {1});
    auto kv = cpu.make_kv_cache(8);
    const int s = kv->add_sequence();
    std::vector<float> logits;
    CHECK_THROWS_WITH_AS(cpu.forward(*kv, Batch{}, logits), "forward: empty batch (no tokens)", sixstep::Error);
    Batch bad_token;
    bad_token.add(300, 0, s, true);
    CHECK_THROWS_WITH_AS(cpu.forward(*kv, bad_token, logits),
                         "forward: token id 300 is outside the vocabulary (0..299)", sixstep::Error);
    Batch gap;
    gap.add(1, 3, s, true);
    CHECK_THROWS_WITH_AS(cpu.forward(*kv, gap, logits),
                         "forward: position 3 of sequence 0 leaves a gap: the sequence holds 0 positions",
                         sixstep::Error);
    Batch no_seq;
    no_seq.add(1, 0, 5, true);
    CHECK_THROWS_WITH_AS(cpu.forward(*kv, no_seq, logits), "forward: sequence 5 is not in the KV cache",
                         sixstep::Error);
    // Nine tokens into a context of eight.
    CHECK_THROWS_WITH_AS(cpu.forward(*kv, Batch::prefill({1, 2, 3, 4, 5, 6, 7, 8, 9}, s), logits),
                         "KV cache full: sequence 0 needs 9 positions but the context holds 8 (n_ctx)",
                         sixstep::Error);
    CHECK(kv->n_tokens(s) == 0);
    CHECK_NOTHROW(cpu.forward(*kv, Batch::prefill({1, 2, 3, 4, 5, 6, 7, 8}, s), logits));
}

TEST_CASE("cpu backend: its name says how many threads and which kernels, in words") {
    const auto model = random_model(GGMLType::F32);
    const std::string level = cpu_simd_name();
    CHECK(CpuBackend(model, {1}).name() == "cpu (1 thread, " + level + ")");
    CHECK(CpuBackend(model, {2}).name() == "cpu (2 threads, " + level + ")");
}

TEST_CASE("forward: the observer gets only the tensors it asks for, and KV fill events") {
    struct Watcher : TensorObserver {
        std::vector<std::string> asked, got;
        std::vector<std::vector<std::int64_t>> shapes;
        int fills = 0, last_filled = 0;
        bool wants(std::string_view name, int layer) override {
            asked.push_back(std::string(name) + "@" + std::to_string(layer));
            return (name == "kq_soft_max" && layer == 1) || name == "result_output" || (name == "Qcur" && layer == 0);
        }
        void tensor(const TensorView& t) override {
            got.push_back(std::string(t.name) + "@" + std::to_string(t.layer));
            shapes.emplace_back(t.shape.begin(), t.shape.end());
            if (t.name == "kq_soft_max") {
                // Each row of the attention pattern sums to one.
                double sum = 0;
                for (int i = 0; i < t.shape[2]; ++i) sum += t.data[i];
                CHECK(sum == doctest::Approx(1.0));
            }
        }
        void kv_fill(int, int, int n, int n_filled) override {
            ++fills;
            last_filled = n_filled;
        }
    } w;
    const auto model = random_model(GGMLType::F32);
    CpuBackend cpu(model, {2});
    auto kv = cpu.make_kv_cache();
    const int s = kv->add_sequence();
    std::vector<float> logits, plain;
    cpu.forward(*kv, Batch::prefill({1, 2, 3, 4}, s), logits, &w);
    REQUIRE(w.got.size() == 3);
    CHECK(w.got[0] == "Qcur@0");
    CHECK(w.got[1] == "kq_soft_max@1");
    CHECK(w.got[2] == "result_output@-1");
    CHECK(w.shapes[0] == std::vector<std::int64_t>{4, 4, 32});
    CHECK(w.shapes[1] == std::vector<std::int64_t>{4, 4, 4});
    CHECK(w.shapes[2] == std::vector<std::int64_t>{1, 300});
    for (const char* name : {"attn_norm@0", "Kcur@1", "Vcur@0", "kqv_out@1", "ffn_inp@0", "ffn_norm@1", "ffn_out@0",
                             "l_out@1", "result_norm@-1"})
        CHECK(std::find(w.asked.begin(), w.asked.end(), name) != w.asked.end());
    CHECK(w.fills == 1);
    CHECK(w.last_filled == 4);
    // Watching does not change the result.
    const auto again = run_fast(model, {1, 2, 3, 4}, false);
    CHECK(maxdiff(again.data(), logits.data(), logits.size()) == 0.0f);
}

}  // namespace forward_test
