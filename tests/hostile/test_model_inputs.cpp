// Hostile model files and numbers: metadata that would take 40× the file's
// size in memory, weights that are not finite numbers, a vocabulary that
// does not fit the weights, and temperatures and logits at the edges.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "hostile.h"
#include "pipeline/core/error.h"
#include "pipeline/llm/gguf/ggml_type.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/sampler.h"

using namespace sixstep;
using namespace sixstep::llm;
using namespace sixstep::test;

namespace {

std::vector<uint8_t> keep_bytes(const GGUFFile& f) {
    return rewrite_gguf(f, [](const std::string&, GGUFValue&) { return true; },
                        [](const GGUFTensorInfo&, std::vector<uint8_t>&) {});
}

// The tiny random model with one tensor's bytes changed by `poke`.
std::string load_error(const std::string& tensor, const std::function<void(std::vector<uint8_t>&)>& poke,
                       GGMLType type = GGMLType::F32) {
    RandomModelParams p = random_model_preset("tiny");
    p.type = type;
    const fs::path path = scratch() / ("tiny-" + std::string(ggml_type_name(type)) + ".gguf");
    if (!fs::exists(path)) write_random_model(path, p);
    const GGUFFile f = GGUFFile::open(path);
    auto bytes = rewrite_gguf(f, [](const std::string&, GGUFValue&) { return true; },
                              [&](const GGUFTensorInfo& t, std::vector<uint8_t>& b) {
                                  if (t.name == tensor) poke(b);
                              });
    try {
        (void)LlamaModel::from_gguf(GGUFFile::from_bytes(std::move(bytes), "broken.gguf"));
    } catch (const Error& e) {
        return e.what();
    }
    return "(loaded)";
}

void put_f32(std::vector<uint8_t>& b, size_t index, float v) { std::memcpy(b.data() + 4 * index, &v, 4); }

}  // namespace

TEST_CASE("gguf: a long u8 array cannot take 40 bytes of memory per byte of file") {
    // Written by hand (the writer would hold the values as GGUFValues too):
    // one key "junk" holding 4 MiB of u8 values — as GGUFValues ~160 MiB.
    std::vector<uint8_t> bytes;
    auto put = [&](uint64_t v, int n) {
        for (int i = 0; i < n; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    bytes = {'G', 'G', 'U', 'F'};
    put(3, 4);          // version
    put(0, 8);          // n_tensors
    put(1, 8);          // n_kv
    put(4, 8);          // key length
    for (char c : std::string("junk")) bytes.push_back(static_cast<uint8_t>(c));
    put(9, 4);          // ARRAY
    put(0, 4);          // of UINT8
    put(4u << 20, 8);   // count, at byte 44
    bytes.resize(bytes.size() + (4u << 20), 7);
    CHECK_THROWS_WITH_AS(GGUFFile::from_bytes(bytes, "junk.gguf"),
                         "junk.gguf: metadata key junk: array of 4194304 values at byte 40 would take 160 MiB of "
                         "memory, over the 72 MiB that metadata may use in a file of this size (64 MiB + 2 × its size)",
                         Error);
    // The same array at 1 MiB fits (40 MiB of memory for a 1 MiB file).
    bytes.resize(bytes.size() - (3u << 20));
    for (int i = 0; i < 8; ++i) bytes[44 + i] = static_cast<uint8_t>((std::uint64_t{1} << 20) >> (8 * i));
    CHECK(GGUFFile::from_bytes(bytes, "ok.gguf").find("junk")->size() == (1u << 20));
    // A real vocabulary is far inside the allowance.
    const GGUFFile v = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-gpt-2.gguf");
    CHECK(v.find("tokenizer.ggml.tokens")->size() == 50257);
}

TEST_CASE("gguf: the model's own arrays still load after a rewrite (the check counts what is kept)") {
    const GGUFFile f = GGUFFile::open(tiny_model());
    const auto bytes = keep_bytes(f);
    CHECK_NOTHROW((void)LlamaModel::from_gguf(GGUFFile::from_bytes(bytes, "same.gguf")));
}

TEST_CASE("weights: NaN or inf anywhere is refused at load, naming the tensor and the element") {
    CHECK(load_error("blk.1.ffn_up.weight", [](auto& b) { put_f32(b, 64 * 3 + 5, std::nanf("")); }) ==
          "error loading model broken.gguf: tensor blk.1.ffn_up.weight: the value at row 3, column 5 is not a finite "
          "number; every weight must be (the file is damaged or was written wrong)");
    CHECK(contains(load_error("token_embd.weight",
                              [](auto& b) { put_f32(b, 10, std::numeric_limits<float>::infinity()); }),
                   "tensor token_embd.weight: the value at row 0, column 10 is not a finite number"));
    CHECK(contains(load_error("output_norm.weight", [](auto& b) { put_f32(b, 3, -std::nanf("")); }),
                   "tensor output_norm.weight: element 3 is -nan; every weight must be a finite number"));
    // F16: 0x7c00 is +inf.
    CHECK(contains(load_error("blk.0.attn_v.weight", [](auto& b) { b[2 * 7] = 0x00, b[2 * 7 + 1] = 0x7c; },
                              GGMLType::F16),
                   "tensor blk.0.attn_v.weight: the value at row 0, column 7 is not a finite number"));
    // Q8_0: each 34-byte block starts with its F16 scale; block 3 of row 0.
    CHECK(contains(load_error("blk.0.ffn_down.weight", [](auto& b) { b[34 * 3] = 0x01, b[34 * 3 + 1] = 0x7e; },
                              GGMLType::Q8_0),
                   "tensor blk.0.ffn_down.weight: the block scale at row 0, block 3 is not a finite number"));
    // Finite extremes load.
    CHECK(load_error("blk.0.attn_q.weight", [](auto& b) { put_f32(b, 0, std::numeric_limits<float>::max()); }) ==
          "(loaded)");
}

TEST_CASE("vocabulary: a tokenizer of another size than the weights is refused at load") {
    const GGUFFile f = GGUFFile::open(tiny_model());
    auto bytes = rewrite_gguf(
        f,
        [](const std::string& key, GGUFValue& v) {
            if (key == "tokenizer.ggml.tokens" || key == "tokenizer.ggml.token_type") {
                GGUFArray a = v.as_array();
                a.items.resize(300);
                v = GGUFValue(std::move(a));
            }
            return true;
        },
        [](const GGUFTensorInfo&, std::vector<uint8_t>&) {});
    CHECK_THROWS_WITH_AS((void)LlamaModel::from_gguf(GGUFFile::from_bytes(std::move(bytes), "mismatch.gguf")),
                         "error loading model mismatch.gguf: the vocabulary has 300 tokens (tokenizer.ggml.tokens) "
                         "but token_embd.weight has 512 rows: the tokenizer and the weights do not belong together",
                         Error);
}

// One hyperparameter rewritten in the tiny model; the load's error, or "(loaded)".
static std::string hparam_error(const std::string& key, const GGUFValue& value) {
    const GGUFFile f = GGUFFile::open(tiny_model());
    auto bytes = rewrite_gguf(
        f,
        [&](const std::string& k, GGUFValue& v) {
            if (k == key) v = value;
            return true;
        },
        [](const GGUFTensorInfo&, std::vector<uint8_t>&) {});
    try {
        (void)LlamaModel::from_gguf(GGUFFile::from_bytes(std::move(bytes), "hparam.gguf"));
    } catch (const Error& e) {
        return e.what();
    }
    return "(loaded)";
}

// A block count the file cannot hold took 6 GB and 22 s (a layer table of
// 2^24 entries) to find a tensor missing; an infinite epsilon loaded and
// wrote NULs; an infinite rope base loaded.
TEST_CASE("hyperparameters: a block count the tensors cannot hold, a non-finite epsilon or rope base, refused") {
    const std::string blocks = hparam_error("llama.block_count", GGUFValue(std::uint32_t{1} << 24));
    CHECK(contains(blocks, "llama.block_count 16777216 needs 150994944 layer tensors (9 a layer), but the file holds"));
    CHECK(contains(hparam_error("llama.attention.layer_norm_rms_epsilon", GGUFValue(INFINITY)),
                   "RMSNorm epsilon inf must be >= 0 and below 1"));
    CHECK(contains(hparam_error("llama.attention.layer_norm_rms_epsilon", GGUFValue(1e30f)), "must be >= 0 and below 1"));
    CHECK(contains(hparam_error("llama.rope.freq_base", GGUFValue(INFINITY)),
                   "llama.rope.freq_base inf must be a finite number > 0"));
    // What models use still loads.
    CHECK(hparam_error("llama.attention.layer_norm_rms_epsilon", GGUFValue(1e-6f)) == "(loaded)");
    CHECK(hparam_error("llama.rope.freq_base", GGUFValue(500000.0f)) == "(loaded)");
}

TEST_CASE("sampler: a tiny temperature is greedy, never the least likely token") {
    const std::vector<float> logits = {0.0f, 5.0f, 1.0f, -3.0f, 2.5f};
    for (float t : {1e-38f, 1e-30f, 1e-10f, std::numeric_limits<float>::denorm_min()}) {
        for (std::uint64_t seed = 0; seed < 20; ++seed) {
            Sampler s({.temperature = t, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = seed});
            SamplerTrace tr;
            CAPTURE(t);
            CHECK(s.sample(logits, &tr) == 1);
            CHECK(tr.chosen_p == 1.0f);
        }
    }
}

TEST_CASE("sampler: a huge temperature gives equal odds, and every p is a number") {
    const std::vector<float> logits = {0.0f, 80.0f, -80.0f, 3.0f};
    Sampler s({.temperature = 1e30f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 3});
    SamplerTrace tr;
    (void)s.sample(logits, &tr);
    const SamplerStage& st = tr.stages.back().name == "dist" ? tr.stages[tr.stages.size() - 2] : tr.stages.back();
    REQUIRE(st.name == "temperature");
    for (const auto& c : st.candidates) CHECK(c.p == doctest::Approx(0.25));
}

TEST_CASE("sampler: NaN or inf logits are an error naming the step, never a draw") {
    Sampler s({.temperature = 0.8f, .seed = 1});
    std::vector<float> logits = {0.1f, 0.2f, 0.3f};
    (void)s.sample(logits);
    (void)s.sample(logits);
    logits[2] = std::nanf("");
    CHECK_THROWS_WITH_AS(s.sample(logits),
                         "sampler, step 3: the logit of token id 2 is nan: the forward pass overflowed (check the "
                         "model's weights)",
                         Error);
    Sampler greedy({.temperature = 0});
    logits[2] = -std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH_AS(greedy.sample(logits), doctest::Contains("sampler, step 1: the logit of token id 2 is -inf"),
                         Error);
    CHECK_THROWS_WITH_AS(top_n(logits, 2), doctest::Contains("next-token probabilities: the logit of token id 2"),
                         Error);
}
