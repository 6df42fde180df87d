// The KV memory calculator: the article's numbers exactly, the bundled
// model's formula against the engine's own cache, and every bad input.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/gguf/gguf_writer.h"
#include "pipeline/serving/kv_calc.h"

using namespace sixstep;
using namespace sixstep::serving;
namespace fs = std::filesystem;

namespace kv_calc_test {

namespace {

KvCalcParams article(double tokens = 128000, double sessions = 8) {
    KvCalcParams p;
    p.n_layer = 36;
    p.n_head_kv = 8;
    p.head_dim = 128;
    p.dtype = KvDtype::F16;
    p.n_tokens = tokens;
    p.n_sessions = sessions;
    return p;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A GGUF file holding only the given metadata (no tensors are needed for a shape).
fs::path metadata_file(const std::string& name, const std::vector<std::pair<std::string, llm::GGUFValue>>& kv) {
    llm::GGUFWriter w;
    for (const auto& [k, v] : kv) w.set(k, v);
    const fs::path p = test::process_temp_dir("kv-calc") / name;
    w.write(p);
    return p;
}

}  // namespace

TEST_CASE("kv-calc: the article's shape gives 144 KiB per token, 18.9 GB per session, 151 GB for 8") {
    const KvCalcResult r = kv_calc(article());
    CHECK(r.bytes_per_element == 2.0);
    CHECK(r.bytes_per_token_layer == 2 * 8 * 128 * 2);
    CHECK(r.bytes_per_token == 147456);  // = 144 × 1024
    CHECK(r.bytes_per_session == 18874368000ull);
    CHECK(r.bytes_total == 150994944000ull);
    REQUIRE(r.formula.size() == 3);
    CHECK(contains(r.formula[0], "= 2 × 36 × 8 × 128 × 2 B = 147,456 B (147 kB = 144 KiB)"));
    CHECK(contains(r.formula[1], "147,456 B × 128,000 = 18,874,368,000 B (18.9 GB = 17.6 GiB)"));
    CHECK(contains(r.formula[2], "18,874,368,000 B × 8 = 150,994,944,000 B (151 GB = 141 GiB)"));
    // Where the formula does not hold is always said.
    std::string notes;
    for (const auto& n : r.notes) notes += n + "\n";
    CHECK(contains(notes, "MLA"));
    CHECK(contains(notes, "Sliding-window"));
    CHECK(contains(notes, "recurrent"));

    // The preset is the same shape.
    KvCalcParams p = kv_preset("article-36l");
    p.n_sessions = 8;
    const KvCalcResult q = kv_calc(p);
    CHECK(q.bytes_per_token == 147456);
    CHECK(q.bytes_total == 150994944000ull);
    CHECK(q.params.shape_name == "article-36l");
}

TEST_CASE("kv-calc: each dtype's bytes, block types counted per block of 32") {
    auto of = [](KvDtype dt) {
        KvCalcParams p = article(1, 1);
        p.dtype = dt;
        return kv_calc(p);
    };
    auto per_token = [&](KvDtype dt) { return of(dt).bytes_per_token; };
    CHECK(per_token(KvDtype::F32) == 294912);
    CHECK(per_token(KvDtype::BF16) == 147456);
    CHECK(per_token(KvDtype::FP8) == 73728);
    CHECK(per_token(KvDtype::INT8) == 73728);
    CHECK(per_token(KvDtype::Q8_0) == 2 * 36 * 8 * (128 / 32) * 34);  // 78,336
    CHECK(per_token(KvDtype::Q4_0) == 2 * 36 * 8 * (128 / 32) * 18);  // 41,472
    // Bytes per stored value: a block type's scale is shared by its 32 values.
    auto per_element = [&](KvDtype dt) { return of(dt).bytes_per_element; };
    CHECK(per_element(KvDtype::F32) == 4.0);
    CHECK(per_element(KvDtype::F16) == 2.0);
    CHECK(per_element(KvDtype::INT8) == 1.0);
    CHECK(per_element(KvDtype::Q8_0) == 1.0625);  // 34 / 32: 32 bytes of values + a 2-byte scale
    CHECK(per_element(KvDtype::Q4_0) == 0.5625);  // 18 / 32: 16 bytes of nibbles + a 2-byte scale
    CHECK(kv_dtype_from_name("Q8_0") == KvDtype::Q8_0);
    CHECK(kv_dtype_from_name("fp8") == KvDtype::FP8);
    CHECK_FALSE(kv_dtype_from_name("fp4").has_value());
    CHECK(kv_dtype_names() == "f32, f16, bf16, fp8, int8, q8_0, q4_0");
}

TEST_CASE("kv-calc: the bundled model's formula equals the bytes the engine's KV cache reports") {
    const fs::path path = fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models" / "stories-3m-f16.gguf";
    const auto model = llm::LlamaModel::load(path);
    KvCalcParams p = kv_shape_from_gguf(model->file());
    CHECK(p.dtype == engine_kv_dtype());
    CHECK(p.n_layer == 4);
    CHECK(p.n_head_kv == 2);
    CHECK(p.head_dim == 32);
    CHECK(p.n_tokens == 512);  // the context length, the default
    p.n_tokens = 1;
    llm::CpuBackend cpu(model, {.n_threads = 1});
    const auto kv = cpu.make_kv_cache();
    CHECK(kv_calc(p).bytes_per_token == kv->stats().bytes_per_token);

    // The preset reads the same file.
    KvCalcParams q = kv_preset("stories-3m");
    q.n_tokens = 1;
    CHECK(kv_calc(q).bytes_per_token == kv->stats().bytes_per_token);
}

TEST_CASE("kv-calc: zero, negative, non-finite, fractional and absurd sizes are one clear error each") {
    const double inf = std::numeric_limits<double>::infinity();
    auto fails = [](KvCalcParams p, const std::string& message) {
        CAPTURE(message);
        CHECK_THROWS_WITH_AS(kv_calc(p), message.c_str(), Error);
    };
    KvCalcParams p = article();
    p.n_layer = 0;
    fails(p, "layers: must be at least 1, got 0");
    p = article();
    p.n_head_kv = -8;
    fails(p, "KV heads: must be at least 1, got -8");
    p = article();
    p.head_dim = std::nan("");
    fails(p, "head dim: nan is not a finite number");
    p = article();
    p.n_tokens = inf;
    fails(p, "tokens: inf is not a finite number");
    p = article();
    p.n_sessions = 2.5;
    fails(p, "sessions: must be a whole number, got 2.5");
    p = article();
    p.n_layer = 1e30;
    fails(p, "layers: 1e+30 is absurdly large (at most 100,000)");
    // Each size within its limit, the product beyond 2^64 bytes.
    p = article(1e12, 1e9);
    fails(p, "kv-calc: the total is beyond 2^64 bytes (18.4 EB): the sizes are absurd");
    p = article();
    p.head_dim = 100;
    p.dtype = KvDtype::Q4_0;
    fails(p, "kv-calc: a q4_0 cache stores blocks of 32 values, so head dim 100 must be a multiple of 32");
    CHECK_THROWS_WITH_AS(kv_preset("nope"), "kv-calc: unknown preset \"nope\" (presets: article-36l, stories-3m)", Error);
}

TEST_CASE("kv-calc: a GGUF without the needed keys is one clear error") {
    const fs::path no_arch = metadata_file("no-arch.gguf", {{"general.name", "x"}});
    CHECK_THROWS_WITH_AS(kv_shape_from_gguf(llm::GGUFFile::open(no_arch)),
                         (no_arch.string() + ": kv-calc needs general.architecture, which the file lacks").c_str(), Error);
    const fs::path no_layers = metadata_file("no-layers.gguf", {{"general.architecture", "llama"},
                                                                {"llama.attention.head_count", uint32_t(8)}});
    CHECK_THROWS_WITH_AS(kv_shape_from_gguf(llm::GGUFFile::open(no_layers)),
                         (no_layers.string() + ": kv-calc needs llama.block_count, which the file lacks").c_str(), Error);
    const fs::path no_width = metadata_file("no-width.gguf", {{"general.architecture", "llama"},
                                                              {"llama.block_count", uint32_t(2)},
                                                              {"llama.attention.head_count", uint32_t(8)}});
    CHECK_THROWS_WITH_AS(kv_shape_from_gguf(llm::GGUFFile::open(no_width)),
                         (no_width.string() + ": kv-calc needs llama.embedding_length, which the file lacks").c_str(),
                         Error);
    const fs::path wrong_type = metadata_file("wrong-type.gguf", {{"general.architecture", "llama"},
                                                                  {"llama.block_count", "four"}});
    CHECK_THROWS_AS(kv_shape_from_gguf(llm::GGUFFile::open(wrong_type)), Error);
}

TEST_CASE("kv-calc: GGUF keys that break the formula become notes, and the shape follows them") {
    // A hybrid model: per-layer KV head counts, 0 for recurrent layers; a sliding window; K wider than V.
    const fs::path f = metadata_file(
        "hybrid.gguf", {{"general.architecture", "hyb"},
                        {"hyb.block_count", uint32_t(6)},
                        {"hyb.attention.head_count", uint32_t(16)},
                        {"hyb.attention.head_count_kv", std::vector<int32_t>{0, 4, 0, 4, 0, 4}},
                        {"hyb.attention.key_length", uint32_t(192)},
                        {"hyb.attention.value_length", uint32_t(128)},
                        {"hyb.attention.sliding_window", uint32_t(4096)},
                        {"hyb.ssm.state_size", uint32_t(16)},
                        {"hyb.context_length", uint32_t(8192)}});
    const KvCalcParams p = kv_shape_from_gguf(llm::GGUFFile::open(f));
    CHECK(p.n_layer == 3);
    CHECK(p.n_head_kv == 4);
    CHECK(p.head_dim == 160);  // (192 + 128) / 2
    CHECK(p.n_tokens == 8192);
    std::string notes;
    for (const auto& n : p.shape_notes) notes += n + "\n";
    CHECK(contains(notes, "0 for 3 of its 6 layers"));
    CHECK(contains(notes, "hyb.attention.sliding_window = 4096"));
    CHECK(contains(notes, "hyb.ssm.*"));
    CHECK(contains(notes, "2 × head_dim = 192 + 128"));
    // 3 layers × 4 heads × (192 + 128) values × 4 bytes (the engine's f32)
    KvCalcParams q = p;
    q.n_tokens = 1;
    CHECK(kv_calc(q).bytes_per_token == 3 * 4 * (192 + 128) * 4);

    const fs::path uneven = metadata_file("uneven.gguf", {{"general.architecture", "u"},
                                                          {"u.block_count", uint32_t(2)},
                                                          {"u.attention.head_count", uint32_t(8)},
                                                          {"u.attention.head_count_kv", std::vector<int32_t>{2, 4}},
                                                          {"u.embedding_length", uint32_t(256)}});
    CHECK_THROWS_WITH_AS(kv_shape_from_gguf(llm::GGUFFile::open(uneven)),
                         (uneven.string() + ": u.attention.head_count_kv differs from layer to layer (2 and 4): kv-calc "
                                            "needs one value").c_str(), Error);
}

}  // namespace kv_calc_test
