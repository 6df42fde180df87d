// The CUDA backend against the CPU, end to end: the bundled models' logits
// and greedy text, batches of several sequences against the same sequences
// alone, copy-on-write blocks, contexts longer than one attention tile, and
// the same errors as the CPU for the same bad batches. Every figure is
// printed. The op-by-op comparison (every named tensor by NMSE) is the
// backend-ops test in tests/llm/cpu/test_backend_ops.cpp, which includes
// this backend whenever a GPU is present.
//
// Where no GPU is usable, each case reports itself skipped, with the reason
// (gpu_available.h).
#include <doctest/doctest.h>

#include "error_of.h"
#include "gpu_available.h"
#include "temp_dir.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpu/cuda_backend.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/cpu/forward.h"
#include "pipeline/llm/generator.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep::llm;
using sixstep::test::error_of;
using sixstep::test::gpu_available;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<LlamaModel> bundled(const char* file) {
    return LlamaModel::load(fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models" / file);
}

// A small random model of the given type, written once per process.
std::shared_ptr<LlamaModel> random_model(GGMLType type, int n_ctx = 96) {
    RandomModelParams p = random_model_preset("tiny");
    p.type = type;
    p.n_embd = 128, p.n_head = 4, p.n_head_kv = 2, p.n_ff = 160, p.n_layer = 2, p.n_vocab = 300, p.n_ctx = n_ctx;
    const fs::path path =
        sixstep::test::process_temp_dir("cuda") / fmt::format("tiny-{}-{}.gguf", ggml_type_name(type), n_ctx);
    if (!fs::exists(path)) write_random_model(path, p);
    return LlamaModel::load(path);
}

float maxdiff(const float* a, const float* b, std::size_t n) {
    float m = 0;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

int argmax(const float* x, int n) { return static_cast<int>(std::max_element(x, x + n) - x); }

std::unique_ptr<Backend> cuda_backend(std::shared_ptr<const LlamaModel> model) {
    return make_backend(BackendKind::cuda, std::move(model)).backend;
}

std::unique_ptr<Backend> cpu_backend(std::shared_ptr<const LlamaModel> model) {
    return make_backend(BackendKind::cpu, std::move(model), {.n_threads = 2}).backend;
}

}  // namespace

TEST_CASE("cuda: the bundled models' logits agree with the CPU within 1e-3, and greedy decoding picks the same tokens") {
    if (!gpu_available()) return;
    for (const char* file : {"stories-3m-f16.gguf", "stories-3m-q8_0.gguf"}) {
        const auto model = bundled(file);
        const int n_vocab = model->hparams().n_vocab;
        // F16: the CPU backend. Q8_0: the reference forward pass, because the
        // CPU backend also rounds activations to 8 bits (tolerance 0.1 in the
        // golden test) while the GPU, like the reference, keeps them float.
        const bool q8 = model->main_type() == GGMLType::Q8_0;
        auto gpu = cuda_backend(model);
        auto cpu = cpu_backend(model);
        const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
        const std::vector<int> prompt = codec->encode("Once upon a time, there was a little girl named Lily. She");

        auto kv_gpu = gpu->make_kv_cache();
        auto kv_cpu = cpu->make_kv_cache();
        const int sg = kv_gpu->add_sequence(), sc = kv_cpu->add_sequence();
        std::vector<float> lg, lc;
        auto step = [&](const Batch& bg, const Batch& bc) {
            gpu->forward(*kv_gpu, bg, lg);
            if (q8)
                forward_reference(*model, *kv_cpu, bc, lc);
            else
                cpu->forward(*kv_cpu, bc, lc);
            REQUIRE(lg.size() == lc.size());
        };
        step(Batch::prefill(prompt, sg), Batch::prefill(prompt, sc));
        float worst = maxdiff(lg.data(), lc.data(), lg.size());
        int same = 0;
        std::string text;
        const int n_steps = 24;
        for (int i = 0; i < n_steps; ++i) {
            const int tg = argmax(lg.data(), n_vocab), tc = argmax(lc.data(), n_vocab);
            CHECK(tg == tc);
            same += tg == tc;
            text += codec->piece(tg);
            const int pos = static_cast<int>(prompt.size()) + i;
            Batch bg, bc;
            bg.add(tg, pos, sg, true);
            bc.add(tg, pos, sc, true);  // both sides continue from the GPU's token
            step(bg, bc);
            worst = std::max(worst, maxdiff(lg.data(), lc.data(), lg.size()));
        }
        MESSAGE(fmt::format("{} on {}: logits maxdiff {:.2e} over {} steps against the {}; same greedy token {}/{}: "
                            "\"{}\"",
                            file, gpu->name(), worst, n_steps + 1, q8 ? "reference" : "CPU backend", same, n_steps,
                            text));
        CHECK(worst <= 1e-3f);
    }
}

TEST_CASE("cuda: the generator's greedy text is the CPU's, word for word") {
    if (!gpu_available()) return;
    const auto model = bundled("stories-3m-f16.gguf");
    const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
    GenerateParams p;
    p.n_predict = 48;
    p.sampling.temperature = 0;
    auto gpu = cuda_backend(model);
    auto cpu = cpu_backend(model);
    for (const char* prompt : {"The cat sat on the", "Once upon a time"}) {
        const GenerateResult g = Generator(*gpu, *codec).generate(prompt, p);
        const GenerateResult c = Generator(*cpu, *codec).generate(prompt, p);
        MESSAGE(fmt::format("\"{}\" → cuda \"{}\"", prompt, g.text));
        CHECK(g.tokens == c.tokens);
        CHECK(g.text == c.text);
    }
}

TEST_CASE("cuda: sequences batched together get the logits they get alone") {
    if (!gpu_available()) return;
    for (GGMLType type : {GGMLType::F32, GGMLType::Q4_0}) {
        const auto model = random_model(type);
        const int n_vocab = model->hparams().n_vocab;
        auto gpu = cuda_backend(model);
        // Prompts of 5 (GEMV alone), 12 and 20 tokens (cuBLAS alone); 37
        // together; then three decode steps of three rows.
        std::vector<std::vector<int>> prompts(3);
        const int lengths[3] = {5, 12, 20};
        for (int s = 0; s < 3; ++s)
            for (int i = 0; i < lengths[s]; ++i) prompts[s].push_back((31 * i + 17 * s + 3) % n_vocab);
        const int decode_token[3][3] = {{7, 8, 9}, {70, 80, 90}, {100, 200, 299}};

        std::vector<std::vector<std::vector<float>>> alone(3);  // [seq][step] logits
        for (int s = 0; s < 3; ++s) {
            auto kv = gpu->make_kv_cache(0, 1, 4);
            const int id = kv->add_sequence();
            std::vector<float> logits;
            gpu->forward(*kv, Batch::prefill(prompts[s], id), logits);
            alone[s].push_back(logits);
            for (int k = 0; k < 3; ++k) {
                Batch b;
                b.add(decode_token[s][k], lengths[s] + k, id, true);
                gpu->forward(*kv, b, logits);
                alone[s].push_back(logits);
            }
        }

        auto kv = gpu->make_kv_cache(0, 3, 4);
        int ids[3];
        Batch prefill;
        for (int s = 0; s < 3; ++s) {
            ids[s] = kv->add_sequence();
            for (int i = 0; i < lengths[s]; ++i) prefill.add(prompts[s][i], i, ids[s], i + 1 == lengths[s]);
        }
        std::vector<float> logits;
        gpu->forward(*kv, prefill, logits);
        REQUIRE(logits.size() == 3u * n_vocab);
        float worst = 0;
        for (int s = 0; s < 3; ++s)
            worst = std::max(worst, maxdiff(logits.data() + s * n_vocab, alone[s][0].data(), n_vocab));
        for (int k = 0; k < 3; ++k) {
            Batch decode;
            for (int s = 0; s < 3; ++s) decode.add(decode_token[s][k], lengths[s] + k, ids[s], true);
            gpu->forward(*kv, decode, logits);
            for (int s = 0; s < 3; ++s)
                worst = std::max(worst, maxdiff(logits.data() + s * n_vocab, alone[s][k + 1].data(), n_vocab));
        }
        MESSAGE(fmt::format("{}: 3 sequences together vs alone, prefill and 3 decode steps: maxdiff {:.2e}",
                            ggml_type_name(type), worst));
        CHECK(worst <= 1e-4f);
    }
}

TEST_CASE("cuda: a forked sequence copies its shared block on the device and diverges as on the CPU") {
    if (!gpu_available()) return;
    const auto model = random_model(GGMLType::F16);
    const int n_vocab = model->hparams().n_vocab;
    auto gpu = cuda_backend(model);
    auto cpu = cpu_backend(model);
    float worst = 0;
    std::vector<float> lg, lc;
    auto kv_gpu = gpu->make_kv_cache(0, 2, 4);
    auto kv_cpu = cpu->make_kv_cache(0, 2, 4);
    // Six positions: block 0 full, block 1 half full — then fork.
    const std::vector<int> prompt = {11, 22, 33, 44, 55, 66};
    const int a = kv_gpu->add_sequence();
    REQUIRE(kv_cpu->add_sequence() == a);
    gpu->forward(*kv_gpu, Batch::prefill(prompt, a), lg);
    cpu->forward(*kv_cpu, Batch::prefill(prompt, a), lc);
    const int b = kv_gpu->fork_sequence(a);
    REQUIRE(kv_cpu->fork_sequence(a) == b);
    CHECK(kv_gpu->stats().n_blocks_shared == 2);
    // Each writes position 6 into (what was) the shared block 1.
    for (int k = 0; k < 3; ++k) {
        Batch step;
        step.add(100 + k, 6 + k, a, true);
        step.add(200 + k, 6 + k, b, true);
        gpu->forward(*kv_gpu, step, lg);
        cpu->forward(*kv_cpu, step, lc);
        REQUIRE(lg.size() == 2u * n_vocab);
        worst = std::max(worst, maxdiff(lg.data(), lc.data(), lg.size()));
        CHECK(maxdiff(lg.data(), lg.data() + n_vocab, n_vocab) > 1e-3f);  // the two really diverged
    }
    CHECK(kv_gpu->stats().n_blocks_shared == kv_cpu->stats().n_blocks_shared);
    MESSAGE(fmt::format("fork + copy-on-write, 3 decode steps of 2 sequences: maxdiff against the CPU {:.2e}", worst));
    CHECK(worst <= 1e-4f);
}

TEST_CASE("cuda: contexts longer than one attention tile match the CPU, softmax weights included") {
    if (!gpu_available()) return;
    const auto model = random_model(GGMLType::F32, 700);
    const LlamaHparams& hp = model->hparams();
    auto gpu = cuda_backend(model);
    auto cpu = cpu_backend(model);
    struct KqOfLastLayer : TensorObserver {
        int layer = 0;
        std::vector<float> kq;
        std::vector<std::int64_t> shape;
        bool wants(std::string_view name, int l) override { return name == "kq_soft_max" && l == layer; }
        void tensor(const TensorView& t) override {
            kq.assign(t.data.begin(), t.data.end());
            shape.assign(t.shape.begin(), t.shape.end());
        }
    } obs_gpu, obs_cpu;
    obs_gpu.layer = obs_cpu.layer = hp.n_layer - 1;
    std::vector<int> tokens;
    for (int i = 0; i < 600; ++i) tokens.push_back((13 * i + 5) % hp.n_vocab);
    auto kv_gpu = gpu->make_kv_cache();
    auto kv_cpu = cpu->make_kv_cache();
    const int sg = kv_gpu->add_sequence(), sc = kv_cpu->add_sequence();
    std::vector<float> lg, lc;
    // 300 + 300 prefill (the second half attends across tiles of 256), then decode at 600..602.
    for (int part = 0; part < 2; ++part) {
        const std::vector<int> chunk(tokens.begin() + part * 300, tokens.begin() + (part + 1) * 300);
        gpu->forward(*kv_gpu, Batch::prefill(chunk, sg, part * 300), lg);
        cpu->forward(*kv_cpu, Batch::prefill(chunk, sc, part * 300), lc);
    }
    float worst = maxdiff(lg.data(), lc.data(), lg.size());
    float worst_kq = 0;
    for (int k = 0; k < 3; ++k) {
        Batch bg, bc;
        bg.add(42 + k, 600 + k, sg, true);
        bc.add(42 + k, 600 + k, sc, true);
        gpu->forward(*kv_gpu, bg, lg, &obs_gpu);
        cpu->forward(*kv_cpu, bc, lc, &obs_cpu);
        worst = std::max(worst, maxdiff(lg.data(), lc.data(), lg.size()));
        REQUIRE(obs_gpu.shape == obs_cpu.shape);
        REQUIRE(obs_gpu.shape == std::vector<std::int64_t>{1, hp.n_head, 601 + k});
        worst_kq = std::max(worst_kq, maxdiff(obs_gpu.kq.data(), obs_cpu.kq.data(), obs_cpu.kq.size()));
        for (int h = 0; h < hp.n_head; ++h) {
            double sum = 0;
            for (int p = 0; p < 601 + k; ++p) sum += obs_gpu.kq[static_cast<std::size_t>(h) * (601 + k) + p];
            CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        }
    }
    MESSAGE(fmt::format("600-position context: logits maxdiff {:.2e}, softmax weights maxdiff {:.2e}", worst,
                        worst_kq));
    CHECK(worst <= 1e-4f);
    CHECK(worst_kq <= 1e-6f);
}

TEST_CASE("cuda: bad batches and a full KV cache give the CPU's errors, and the cache keeps what it held") {
    if (!gpu_available()) return;
    const auto model = random_model(GGMLType::F32);
    auto gpu = cuda_backend(model);
    auto cpu = cpu_backend(model);
    // A context of 8 positions in blocks of 4; a pool of 3 blocks for 2 sequences.
    KvCacheParams params = kv_cache_params(model->hparams(), 8, 1, 4);
    params.n_blocks = 3;
    auto kv_gpu = gpu->make_kv_cache(params);
    auto kv_cpu = cpu->make_kv_cache(params);
    const int s = kv_gpu->add_sequence(), t = kv_gpu->add_sequence();
    REQUIRE(kv_cpu->add_sequence() == s);
    REQUIRE(kv_cpu->add_sequence() == t);
    std::vector<float> logits;
    auto both = [&](const Batch& b) {
        const std::string eg = error_of([&] { gpu->forward(*kv_gpu, b, logits); });
        const std::string ec = error_of([&] { cpu->forward(*kv_cpu, b, logits); });
        CHECK(eg == ec);
        CHECK(kv_gpu->n_tokens(s) == kv_cpu->n_tokens(s));
        CHECK(kv_gpu->n_tokens(t) == kv_cpu->n_tokens(t));
        CHECK(kv_gpu->n_free_blocks() == kv_cpu->n_free_blocks());
        return eg;
    };
    CHECK(both(Batch{}) == "forward: empty batch (no tokens)");
    Batch bad_token;
    bad_token.add(300, 0, s, true);
    CHECK(both(bad_token) == "forward: token id 300 is outside the vocabulary (0..299)");
    Batch gap;
    gap.add(1, 3, s, true);
    CHECK(both(gap) == "forward: position 3 of sequence 0 leaves a gap: the sequence holds 0 positions");
    Batch no_seq;
    no_seq.add(1, 0, 5, true);
    CHECK(both(no_seq) == "forward: sequence 5 is not in the KV cache");
    // Past the context, then past the pool (s holds 6 positions = 2 blocks; t needs 2 more of the 1 left).
    CHECK(both(Batch::prefill({1, 2, 3, 4, 5, 6, 7, 8, 9}, s)).starts_with("KV cache full: "));
    CHECK(both(Batch::prefill({1, 2, 3, 4, 5, 6}, s)).empty());
    const std::string full = both(Batch::prefill({9, 8, 7, 6, 5}, t));
    MESSAGE("the pool runs out: " << full);
    CHECK(full.starts_with("KV cache full: "));
    CHECK(kv_gpu->n_tokens(t) == 0);
    // What fits still runs, and still agrees.
    std::vector<float> lg, lc;
    Batch ok;
    ok.add(6, 6, s, true);
    ok.add(9, 0, t, true);
    gpu->forward(*kv_gpu, ok, lg);
    cpu->forward(*kv_cpu, ok, lc);
    MESSAGE(fmt::format("after the errors: maxdiff {:.2e}", maxdiff(lg.data(), lc.data(), lc.size())));
    CHECK(maxdiff(lg.data(), lc.data(), lc.size()) <= 1e-4f);
}

TEST_CASE("cuda: the backend names its device, keeps the cache in device memory and the weights once per model") {
    if (!gpu_available()) return;
    const auto model = random_model(GGMLType::Q8_0);
    auto gpu = cuda_backend(model);
    const std::string name = gpu->name();
    MESSAGE("backend: " << name);
    CHECK(name.starts_with("cuda ("));
    CHECK(name.ends_with(" GiB)"));

    auto kv = gpu->make_kv_cache(0, 1, 4);
    CHECK(kv->storage().kind() == "cuda");
    CHECK(kv->stats().bytes_allocated == 0);
    const int s = kv->add_sequence();
    std::vector<float> logits;
    gpu->forward(*kv, Batch::prefill({1, 2, 3, 4, 5}, s), logits);
    CHECK(kv->stats().bytes_allocated == 2 * 4 * kv->stats().bytes_per_token);  // two blocks of four positions

    // A host cache is refused before anything is reserved.
    auto host_kv = cpu_backend(model)->make_kv_cache();
    const int h = host_kv->add_sequence();
    CHECK(error_of([&] { gpu->forward(*host_kv, Batch::prefill({1, 2}, h), logits); }) ==
          "cuda backend: the KV cache lives in host memory; make it with the backend's make_kv_cache");
    CHECK(host_kv->n_tokens(h) == 0);
    CHECK(host_kv->n_free_blocks() == host_kv->stats().n_blocks);

    // A second backend of the same model shares the uploaded weights.
    auto gpu2 = cuda_backend(model);
    const auto* c1 = dynamic_cast<const sixstep::gpu::CudaBackend*>(gpu.get());
    const auto* c2 = dynamic_cast<const sixstep::gpu::CudaBackend*>(gpu2.get());
    REQUIRE(c1);
    REQUIRE(c2);
    CHECK(&c1->weights() == &c2->weights());
    MESSAGE(fmt::format("weights on the device: {} bytes for a {}-byte file", c1->weights().bytes(),
                        model->file().n_tensor_bytes()));
}

TEST_CASE("cuda: passes replayed from CUDA graphs give the logits of launching each kernel, bit for bit") {
    if (!gpu_available()) return;
    for (GGMLType type : {GGMLType::F16, GGMLType::Q8_0}) {
        const auto model = random_model(type);
        const int n_vocab = model->hparams().n_vocab;
        sixstep::gpu::CudaBackend direct(model, {}), graphed(model, {});
        direct.use_graphs(false);
        graphed.use_graphs(true);
        // Blocks of 4 positions: the block tables grow every fourth step, so
        // the metadata a replay reads changes size under the same graph.
        auto kv_d = direct.make_kv_cache(0, 2, 4);
        auto kv_g = graphed.make_kv_cache(0, 2, 4);
        const int a_d = kv_d->add_sequence(), a_g = kv_g->add_sequence();
        std::vector<float> ld, lg;
        int steps = 0, differing = 0;
        auto both = [&](const Batch& bd, const Batch& bg) {
            direct.forward(*kv_d, bd, ld);
            graphed.forward(*kv_g, bg, lg);
            REQUIRE(ld.size() == lg.size());
            ++steps;
            differing += ld != lg;
        };
        const std::vector<int> prompt = {11, 22, 33, 44, 55, 66};  // 6 tokens: a graphed shape of its own
        both(Batch::prefill(prompt, a_d), Batch::prefill(prompt, a_g));
        int pos = static_cast<int>(prompt.size()), b_d = -1, b_g = -1, b_pos = 0;
        for (int i = 0; i < 24; ++i) {
            const int next = argmax(ld.data(), n_vocab);
            if (i == 10) {  // a second sequence joins: prompt of 3, then two rows per step
                b_d = kv_d->add_sequence();
                b_g = kv_g->add_sequence();
                both(Batch::prefill({5, 6, 7}, b_d), Batch::prefill({5, 6, 7}, b_g));
                b_pos = 3;
            }
            Batch bd, bg;
            bd.add(next, pos, a_d, true);
            bg.add(next, pos, a_g, true);
            if (b_d >= 0) {
                bd.add(next % 50, b_pos, b_d, true);
                bg.add(next % 50, b_pos, b_g, true);
                ++b_pos;
            }
            ++pos;
            both(bd, bg);
        }
        const auto& g = graphed.graphs();
        MESSAGE(fmt::format("{}: {} passes, {} with different logits; graphs: {} captured, {} launched, {} kept",
                            ggml_type_name(type), steps, differing, g.captures(), g.launches(), g.size()));
        CHECK(differing == 0);
        CHECK(direct.graphs().launches() == 0);
        CHECK(g.launches() == steps);
        CHECK(g.size() == 4);  // shapes (tokens, outputs): (6, 1), (1, 1), (3, 1), (2, 2)
        CHECK(g.captures() < steps / 2);
    }
}

TEST_CASE("cuda: SIXSTEP_CUDA_GRAPHS takes on or off and names any other value") {
    // Needs no GPU: the choice is read before any device is touched.
    ::setenv("SIXSTEP_CUDA_GRAPHS", "off", 1);
    CHECK_FALSE(sixstep::gpu::cuda_graphs_from_environment());
    ::setenv("SIXSTEP_CUDA_GRAPHS", "on", 1);
    CHECK(sixstep::gpu::cuda_graphs_from_environment());
    ::setenv("SIXSTEP_CUDA_GRAPHS", "sometimes", 1);
    CHECK(error_of([] { sixstep::gpu::cuda_graphs_from_environment(); }) ==
          "SIXSTEP_CUDA_GRAPHS=\"sometimes\" is not a choice (use on or off)");
    ::setenv("SIXSTEP_CUDA_GRAPHS", std::string(100000, 'x').c_str(), 1);
    CHECK(error_of([] { sixstep::gpu::cuda_graphs_from_environment(); }).size() < 200);
    ::unsetenv("SIXSTEP_CUDA_GRAPHS");
    CHECK(sixstep::gpu::cuda_graphs_from_environment());
}
