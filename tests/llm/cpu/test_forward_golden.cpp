// The bundled models against the recipe's PyTorch float64 fixtures
// (tests/data/golden/README.md). A missing fixture or model file is a
// failure: a golden test that passes without comparing anything is no test.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/cpu/forward.h"
#include "pipeline/llm/sampler.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> golden_files() {
    std::vector<fs::path> out;
    const fs::path dir = fs::path(SIXSTEP_TEST_DATA) / "golden";
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("stories-", 0) == 0 && e.path().extension() == ".json") out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Tolerances on logits (absolute), stated once. Float weights: float32
// arithmetic against float64. Q8_0: the fast path also rounds activations to
// 8 bits per block of 32, as ggml's CPU dot product does.
struct Tolerance {
    float reference, fast;
};
Tolerance tolerance_for(const nlohmann::json& j) {
    bool q8 = false;
    for (const auto& t : j.value("weight_types", nlohmann::json::array())) q8 = q8 || t.get<std::string>() == "Q8_0";
    return q8 ? Tolerance{2e-3f, 0.1f} : Tolerance{1e-3f, 1e-3f};
}

float maxdiff(const std::vector<float>& a, const nlohmann::json& b) {
    float m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i].get<float>()));
    return m;
}

std::vector<float> last_logits(CpuBackend& cpu, const std::vector<int>& ids, bool all = false) {
    auto kv = cpu.make_kv_cache(static_cast<int>(ids.size()) + 1);
    const int s = kv->add_sequence();
    Batch b;
    for (int i = 0; i < static_cast<int>(ids.size()); ++i) b.add(ids[i], i, s, all || i + 1 == static_cast<int>(ids.size()));
    std::vector<float> logits;
    cpu.forward(*kv, b, logits);
    return logits;
}

}  // namespace

TEST_CASE("golden: bundled models reproduce the recipe's PyTorch logits") {
    const auto files = golden_files();
    // Every bundled model has its fixture (tests/data/golden/README.md).
    const fs::path models = fs::path(SIXSTEP_SOURCE_DIR) / "assets" / "models";
    int n_models = 0;
    for (const auto& e : fs::directory_iterator(models)) {
        if (e.path().extension() != ".gguf") continue;
        ++n_models;
        const fs::path fixture = fs::path(SIXSTEP_TEST_DATA) / "golden" / e.path().filename().replace_extension(".json");
        CHECK_MESSAGE(fs::exists(fixture), "no golden fixture " << fixture.string() << " for " << e.path().string());
    }
    REQUIRE_MESSAGE(n_models > 0, "no bundled models in " << models.string());
    REQUIRE_MESSAGE(!files.empty(), "no tests/data/golden/stories-*.json fixtures");
    for (const fs::path& file : files) {
        std::ifstream in(file);
        const nlohmann::json j = nlohmann::json::parse(in);
        const fs::path model_path = fs::path(SIXSTEP_SOURCE_DIR) / j["model_file"].get<std::string>();
        if (!fs::exists(model_path)) {
            FAIL_CHECK(file.filename().string() << ": its model " << model_path.string() << " is missing");
            continue;
        }
        const Tolerance tol = tolerance_for(j);
        const auto model = LlamaModel::load(model_path);
        CpuBackend cpu(model, {2});
        const int n_vocab = model->hparams().n_vocab;
        REQUIRE(n_vocab == j["vocab_size"].get<int>());

        // Last-position logits of each prompt: fast path, and the reference on the first.
        float d_fast = 0, d_ref = 0, d_lse = 0;
        bool first = true;
        for (const auto& pr : j["prompts"]) {
            const std::vector<int> ids = pr["ids"];
            const auto fast = last_logits(cpu, ids);
            if (pr.contains("logits")) d_fast = std::max(d_fast, maxdiff(fast, pr["logits"]));
            for (const auto& t : pr["top20"])
                d_fast = std::max(d_fast, std::fabs(fast[t["id"].get<int>()] - t["logit"].get<float>()));
            double m = *std::max_element(fast.begin(), fast.end()), sum = 0;
            for (float l : fast) sum += std::exp(l - m);
            d_lse = std::max(d_lse, static_cast<float>(std::fabs(m + std::log(sum) - pr["lse"].get<double>())));
            CHECK(argmax(fast) == pr["top20"][0]["id"].get<int>());
            if (first && pr.contains("logits")) {
                KvCache kv({model->hparams().n_layer, model->hparams().n_head_kv, model->hparams().head_dim(),
                            static_cast<int>(ids.size())});
                const int s = kv.add_sequence();
                std::vector<float> ref;
                forward_reference(*model, kv, Batch::prefill(ids, s), ref);
                d_ref = maxdiff(ref, pr["logits"]);
                first = false;
            }
        }
        MESSAGE(file.filename().string() << ": last-position maxdiff fast " << d_fast << " (tol " << tol.fast
                                         << "), reference " << d_ref << " (tol " << tol.reference << "), lse "
                                         << d_lse);
        CHECK(d_fast < tol.fast);
        CHECK(d_ref < tol.reference);
        CHECK(d_lse < tol.fast);

        // Every position of one prompt, in one prefill.
        if (j.contains("all_positions")) {
            const auto& ap = j["all_positions"];
            const std::vector<int> ids = ap["ids"];
            const auto all = last_logits(cpu, ids, true);
            float d = 0;
            for (std::size_t p = 0; p < ids.size(); ++p) {
                const std::vector<float> row(all.begin() + p * n_vocab, all.begin() + (p + 1) * n_vocab);
                d = std::max(d, maxdiff(row, ap["logits"][p]));
            }
            MESSAGE(file.filename().string() << ": all " << ids.size() << " positions maxdiff " << d);
            CHECK(d < tol.fast);
        }

        // Greedy continuation, prefill then decode, until a near-tie.
        if (j.contains("greedy")) {
            const auto& g = j["greedy"];
            const std::vector<int> ids = g["ids"];
            const std::vector<int> want = g["new_ids"];
            const std::vector<float> margins = g["margins"];
            auto kv = cpu.make_kv_cache(static_cast<int>(ids.size() + want.size()) + 1);
            const int s = kv->add_sequence();
            std::vector<float> logits;
            cpu.forward(*kv, Batch::prefill(ids, s), logits);
            // Teacher forcing: always feed the fixture's token, so that one
            // near-tie (which float32 may flip) does not end the comparison.
            int checked = 0, matched = 0;
            for (std::size_t i = 0; i < want.size(); ++i) {
                if (margins[i] >= 2 * tol.fast) {
                    ++checked;
                    const int got = argmax(logits);
                    CHECK(got == want[i]);
                    matched += got == want[i];
                }
                Batch b;
                b.add(want[i], static_cast<int>(ids.size() + i), s, true);
                cpu.forward(*kv, b, logits);
            }
            MESSAGE(file.filename().string() << ": greedy argmax matched " << matched << " of " << checked
                                             << " steps whose top-2 margin exceeds " << 2 * tol.fast << " (of "
                                             << want.size() << ")");
        }

        // The probabilities of the cat's words.
        if (j.contains("cat")) {
            const auto& c = j["cat"];
            const auto p = softmax(last_logits(cpu, c["ids"].get<std::vector<int>>()));
            for (const auto& item : c["words"].items()) {
                // (not a structured binding: clang 14 cannot capture one in doctest's message lambda)
                const std::string word = item.key();
                const auto& w = item.value();
                const float got = p[w["id"].get<int>()], want = w["p"].get<float>();
                CHECK_MESSAGE(std::fabs(got - want) < (tol.fast < 0.01f ? 1e-3f : 0.05f),
                              "p(\"" << word << "\") = " << got << ", expected " << want);
            }
        }
    }
}
