// The bundled models' tokenizer against the recipe's own tokenizer
// (tests/data/golden/tokenizer.json, written by assets/models/recipe/fixtures.py):
// same ids, same pieces, exact decoding.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/vocab/vocab.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

TEST_CASE("golden: the bundled vocabulary tokenizes the recipe's texts to the recipe's ids") {
    const fs::path golden = fs::path(SIXSTEP_TEST_DATA) / "golden" / "tokenizer.json";
    REQUIRE_MESSAGE(fs::exists(golden), "missing " << golden.string() << " (assets/models/recipe/fixtures.py writes it)");
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(golden));
    const fs::path vocab_file = fs::path(SIXSTEP_SOURCE_DIR) / j.at("vocab_file").get<std::string>();
    REQUIRE_MESSAGE(fs::exists(vocab_file), "missing " << vocab_file.string());
    const auto file = GGUFFile::open(vocab_file);
    const Vocab vocab = Vocab::from_gguf(file);
    if (j.contains("bos_id")) CHECK(vocab.bos() == j.at("bos_id").get<TokenId>());
    if (j.contains("eos_id")) CHECK(vocab.eos() == j.at("eos_id").get<TokenId>());
    const auto& cases = j.at("cases");
    CHECK(cases.size() > 0);
    for (const auto& c : cases) {
        const std::string text = c.at("text").get<std::string>();
        CAPTURE(text);
        const auto expected = c.at("ids").get<std::vector<TokenId>>();
        const auto ids = vocab.tokenize(text, /*add_special=*/false);
        CHECK(ids == expected);
        if (c.contains("pieces")) {
            std::vector<std::string> pieces;
            for (TokenId id : ids) pieces.push_back(vocab.token_text(id));
            CHECK(pieces == c.at("pieces").get<std::vector<std::string>>());
        }
        CHECK(vocab.detokenize(ids) == text);
    }
}
