// Quantizing model files: round-trip error within the documented bound per
// block, llama.cpp's rules on what is quantized, the quantized bundled model
// still saying " mat", and bad input leaving nothing behind.
#include <doctest/doctest.h>

#include "temp_dir.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/gguf/gguf_writer.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/tools/quantize.h"
#include "pipeline/tools/random_model.h"

using namespace sixstep;
using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace {

const fs::path bundled_f16 = fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models" / "stories-3m-f16.gguf";
const fs::path bundled_q8_0 = fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models" / "stories-3m-q8_0.gguf";

fs::path scratch(const std::string& name) {
    const fs::path dir = test::process_temp_dir("quantize") / name;
    fs::create_directories(dir);
    return dir;
}

std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// The greedy next token after "The cat sat on the", as text.
std::string next_after_cat(const fs::path& model_path) {
    const auto model = LlamaModel::load(model_path);
    const Vocab vocab = Vocab::from_gguf(model->file());
    CpuBackend cpu(model, {.n_threads = 1});
    auto kv = cpu.make_kv_cache(64);
    const int seq = kv->add_sequence();
    std::vector<float> logits;
    cpu.forward(*kv, Batch::prefill(vocab.tokenize("The cat sat on the"), seq), logits);
    const int best = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    return vocab.token_to_piece(best);
}

}  // namespace

TEST_CASE("quantize: the documented bound holds for every block, and is reached") {
    // Q4_0's worst case: the largest magnitude is negative, so the opposite
    // side's +amax lands on level +8, which clamps to +7: a whole step, amax/8.
    std::vector<float> x(32, 0.0f);
    x[0] = -1.0f;
    x[1] = 1.0f;
    std::vector<float> y = dequantize(GGMLType::Q4_0, quantize(GGMLType::Q4_0, x.data(), 32).data(), 32);
    CHECK(std::fabs(y[1] - x[1]) == doctest::Approx(1.0 / 8));
    CHECK(std::fabs(y[1] - x[1]) <= quantize_error_bound(GGMLType::Q4_0, 1.0f));
    // Q8_0's worst case: a value halfway between two levels, half a step of amax/127.
    x.assign(32, 0.0f);
    x[0] = 127.0f;
    x[1] = 0.5f;
    y = dequantize(GGMLType::Q8_0, quantize(GGMLType::Q8_0, x.data(), 32).data(), 32);
    CHECK(std::fabs(y[1] - x[1]) == doctest::Approx(0.5));
    CHECK(std::fabs(y[1] - x[1]) <= quantize_error_bound(GGMLType::Q8_0, 127.0f));
    // Tiny blocks whose f16 scale is subnormal stay within the absolute term.
    for (float amax : {1e-7f, 3e-6f, 1e-4f}) {
        for (int i = 0; i < 32; ++i) x[i] = amax * std::sin(1.0f + static_cast<float>(i));
        for (GGMLType t : {GGMLType::Q8_0, GGMLType::Q4_0}) {
            float a = 0;
            for (float v : x) a = std::max(a, std::fabs(v));
            y = dequantize(t, quantize(t, x.data(), 32).data(), 32);
            for (int i = 0; i < 32; ++i) CHECK(std::fabs(y[i] - x[i]) <= quantize_error_bound(t, a));
        }
    }
}

TEST_CASE("quantize: the bundled model to Q8_0 and Q4_0 — every block within its bound, norms kept, still \" mat\"") {
    const fs::path dir = scratch("bundled");
    const auto source = LlamaModel::load(bundled_f16);
    for (GGMLType type : {GGMLType::Q8_0, GGMLType::Q4_0}) {
        CAPTURE(ggml_type_name(type));
        const fs::path out = dir / fmt::format("stories-3m-{}.gguf", ggml_type_name(type));
        const QuantizeReport r = quantize_model(bundled_f16, out, {.type = type});
        CHECK(r.n_quantized == 30);  // token_embd, 4 × 7 matrices, output
        CHECK(r.n_kept == 9);        // 4 × 2 norms, output_norm
        CHECK(r.file_bytes_out == fs::file_size(out));
        CHECK(listing(dir).size() == (type == GGMLType::Q8_0 ? 1u : 2u));  // no temporary left

        const GGUFFile q = GGUFFile::open(out);
        CHECK(q.get_u32("general.file_type") == (type == GGMLType::Q8_0 ? 7u : 2u));
        CHECK(q.get_str("tokenizer.ggml.model") == "gpt2");  // metadata carried over
        float worst = 0;
        for (const GGUFTensorInfo& t : source->file().tensors()) {
            const GGUFTensorInfo& o = q.tensor(t.name);
            CHECK(o.shape() == t.shape());
            if (t.n_dims == 1) {
                CHECK(o.type == GGMLType::F32);
                continue;
            }
            REQUIRE(o.type == type);
            const std::vector<float> x = t.to_f32(), y = o.to_f32();
            for (size_t b = 0; b < x.size(); b += 32) {
                float amax = 0, err = 0;
                for (size_t j = b; j < b + 32; ++j) amax = std::max(amax, std::fabs(x[j]));
                for (size_t j = b; j < b + 32; ++j) err = std::max(err, std::fabs(x[j] - y[j]));
                const float bound = quantize_error_bound(type, amax);
                if (err > bound) FAIL_CHECK(t.name << " block " << b / 32 << ": error " << err << " > bound " << bound);
                worst = std::max(worst, err / bound);
            }
        }
        // The bound is tight, not a formality: some block comes close to it.
        CHECK(worst > 0.8f);
        CHECK(worst <= 1.0f);
        CHECK(next_after_cat(out) == " mat");
    }
}

TEST_CASE("quantize: Q8_0 of the bundled F16 model equals the bundled Q8_0 file written by the recipe") {
    // Two independent writers of ggml's reference Q8_0 (C++ here, Python in
    // assets/models/recipe/export_gguf.py) agree byte for byte.
    const fs::path out = scratch("recipe") / "q8_0.gguf";
    quantize_model(bundled_f16, out, {.type = GGMLType::Q8_0});
    const GGUFFile mine = GGUFFile::open(out), recipe = GGUFFile::open(bundled_q8_0);
    REQUIRE(mine.tensors().size() == recipe.tensors().size());
    for (size_t i = 0; i < mine.tensors().size(); ++i) {
        const auto& a = mine.tensors()[i];
        const auto& b = recipe.tensors()[i];
        CHECK(a.name == b.name);
        CHECK(a.type == b.type);
        CHECK(std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin(), b.bytes().end()));
    }
}

TEST_CASE("quantize: rows that are not whole blocks keep their type, and the report says why") {
    const fs::path dir = scratch("odd");
    RandomModelParams p = random_model_preset("tiny");
    p.n_embd = 48;  // rows of 48 values: not whole blocks of 32
    p.n_head = 4;
    p.n_head_kv = 2;
    p.n_ff = 64;    // ffn_down's rows hold 64 values: two blocks
    p.n_layer = 1;
    write_random_model(dir / "odd-f32.gguf", p);
    const QuantizeReport r = quantize_model(dir / "odd-f32.gguf", dir / "odd-q8_0.gguf", {.type = GGMLType::Q8_0});
    for (const QuantizedTensor& t : r.tensors) {
        CAPTURE(t.name);
        if (t.name == "blk.0.ffn_down.weight") {
            CHECK(t.to == GGMLType::Q8_0);
            CHECK(t.kept_because.empty());
        } else if (t.shape.size() == 2) {
            CHECK(t.to == GGMLType::F32);
            CHECK(t.kept_because == "rows of 48 values are not whole blocks of 32");
        }
    }
    CHECK(LlamaModel::load(dir / "odd-q8_0.gguf")->weights().layers[0].ffn_down.type == GGMLType::Q8_0);
}

TEST_CASE("quantize: bad input is one clear error and leaves no file behind") {
    const fs::path dir = scratch("bad");
    const fs::path in = dir / "in.gguf";
    fs::copy_file(bundled_f16, in);
    const auto before = listing(dir);
    auto refused = [&](const fs::path& from, const fs::path& to, GGMLType type, const std::string& part) {
        CAPTURE(part);
        try {
            quantize_model(from, to, {.type = type});
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find(part) != std::string::npos);
        }
    };
    // Onto its own input: the same path, another spelling, a symbolic link, a hard link.
    refused(in, in, GGMLType::Q8_0, "is the input file");
    refused(in, dir / "." / "in.gguf", GGMLType::Q8_0, "is the input file");
    fs::create_symlink(in, dir / "link.gguf");
    refused(in, dir / "link.gguf", GGMLType::Q4_0, "through a symbolic link");
    fs::create_hard_link(in, dir / "hard.gguf");
    refused(in, dir / "hard.gguf", GGMLType::Q4_0, "through a hard link");
    fs::remove(dir / "link.gguf");
    fs::remove(dir / "hard.gguf");
    CHECK(fs::file_size(in) == fs::file_size(bundled_f16));  // untouched

    refused(in, dir / "out.gguf", GGMLType::Q5_0, "type q5_0 is not one sixstep quantizes to (q8_0, q4_0)");
    refused(in, dir / "out.gguf", GGMLType::F16, "type f16 is not one sixstep quantizes to");
    refused(dir / "missing.gguf", dir / "out.gguf", GGMLType::Q8_0, "no such file");
    refused(in, dir / "no-such-folder" / "out.gguf", GGMLType::Q8_0, "does not exist");

    // Not a Llama model: another architecture, and not GGUF at all.
    GGUFWriter w;
    w.set("general.architecture", "gpt2");
    w.set("gpt2.block_count", uint32_t(1));
    w.write(dir / "gpt2.gguf");
    refused(dir / "gpt2.gguf", dir / "out.gguf", GGMLType::Q8_0, "sixstep runs only \"llama\"");
    std::ofstream(dir / "text.gguf") << "not a model\n";
    refused(dir / "text.gguf", dir / "out.gguf", GGMLType::Q8_0, "not a GGUF file");

    // Already quantized: requantizing compounds errors, so it is refused by default.
    refused(bundled_q8_0, dir / "out.gguf", GGMLType::Q4_0, "is already q8_0");
    std::vector<std::string> expected = before;
    expected.push_back("gpt2.gguf");
    expected.push_back("text.gguf");
    std::sort(expected.begin(), expected.end());
    CHECK(listing(dir) == expected);  // no output, no temporary

    // Allowed on request, and the result loads.
    const QuantizeReport r =
        quantize_model(bundled_q8_0, dir / "requantized.gguf", {.type = GGMLType::Q4_0, .allow_requantize = true});
    CHECK(r.n_quantized == 30);
    CHECK(next_after_cat(dir / "requantized.gguf") == " mat");
}
