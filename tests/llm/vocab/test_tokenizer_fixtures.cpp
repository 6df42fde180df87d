// The two real vocabularies in tests/data/tokenizers (from llama.cpp's
// models/ folder, see its README): every text must tokenize to exactly the
// ids the models' reference tokenizers produce, and decode back to itself.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/vocab/vocab.h"

using namespace sixstep::llm;

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "cannot read " << path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Case {
    std::string text;
    std::vector<TokenId> ids;
};

// *.inp: texts, each followed by "\n__ggml_vocab_test__\n"; *.out: one line of
// space-separated ids per text.
std::vector<Case> load_cases(const std::string& vocab_path) {
    const std::string inp = read_file(vocab_path + ".inp");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<Case> cases;
    for (size_t at = 0, next; (next = inp.find(sep, at)) != std::string::npos; at = next + sep.size())
        cases.push_back({inp.substr(at, next - at), {}});
    std::istringstream out(read_file(vocab_path + ".out"));
    std::string line;
    size_t i = 0;
    while (std::getline(out, line)) {
        REQUIRE(i < cases.size());
        std::istringstream ls(line);
        for (TokenId id; ls >> id;) cases[i].ids.push_back(id);
        ++i;
    }
    REQUIRE(i == cases.size());
    return cases;
}

std::string ids_str(const std::vector<TokenId>& ids) {
    std::string s;
    for (TokenId id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
    return s;
}

void check_fixture(const std::string& name) {
    const std::string path = std::string(SIXSTEP_TEST_DATA) + "/tokenizers/" + name;
    const auto file = GGUFFile::open(path);
    const Vocab vocab = Vocab::from_gguf(file);
    const auto cases = load_cases(path);
    CHECK(cases.size() == 46);
    int exact = 0;
    for (const auto& c : cases) {
        CAPTURE(c.text);
        const auto ids = vocab.tokenize(c.text, /*add_special=*/false, /*parse_special=*/false);
        CHECK(ids_str(ids) == ids_str(c.ids));
        if (ids == c.ids) ++exact;
        // exact decoding: every byte comes back (the SPM leading space is removed again)
        CHECK(vocab.detokenize(ids) == c.text);
    }
    MESSAGE(name << ": " << exact << "/" << cases.size() << " texts tokenized exactly");
}

}  // namespace

TEST_CASE("tokenizer fixture: llama-spm (SentencePiece BPE with byte fallback) matches every text exactly") {
    check_fixture("ggml-vocab-llama-spm.gguf");
}

TEST_CASE("tokenizer fixture: gpt-2 (byte-level BPE) matches every text exactly") {
    check_fixture("ggml-vocab-gpt-2.gguf");
}

TEST_CASE("tokenizer fixture vocabularies: special ids and flags from the metadata") {
    const auto spm_file = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-llama-spm.gguf");
    const Vocab spm = Vocab::from_gguf(spm_file);
    CHECK(spm.type() == VocabType::SPM);
    CHECK(spm.n_tokens() == 32000);
    CHECK(spm.bos() == 1);
    CHECK(spm.eos() == 2);
    CHECK(spm.unk() == 0);
    CHECK(spm.add_bos());
    CHECK_FALSE(spm.add_eos());
    CHECK(spm.token_type(1) == TokenType::Control);
    CHECK(spm.token_type(3) == TokenType::Byte);
    CHECK(spm.token_text(3) == "<0x00>");
    CHECK(spm.is_eog(2));

    const auto gpt_file = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-gpt-2.gguf");
    const Vocab gpt = Vocab::from_gguf(gpt_file);
    CHECK(gpt.type() == VocabType::BPE);
    CHECK(gpt.pretokenizer() == PreTokenizer::GPT2);
    CHECK(gpt.n_tokens() == 50257);
    CHECK(gpt.bos() == 50256);
    CHECK(gpt.eos() == 50256);
    CHECK_FALSE(gpt.add_bos());
    CHECK(gpt.token_text(50256) == "<|endoftext|>");
}
