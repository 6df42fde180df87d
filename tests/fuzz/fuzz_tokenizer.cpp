// libFuzzer target: tokenize arbitrary bytes with both fixture vocabularies
// (SentencePiece "llama" and byte-level "gpt2"), then decode. The first byte
// picks the options; the rest is the text.
//
// Must hold for every input:
//  - no crash, no sanitizer report, every id is in the vocabulary;
//  - gpt2: detokenize(tokenize(text)) == text, bytes exact;
//  - llama: the same, unless the text contains "▁" (U+2581), which the
//    SentencePiece scheme turns into a space by design;
//  - streaming decoding gives the same bytes as whole decoding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pipeline/llm/vocab/detokenizer.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/vocab/vocab.h"

using namespace sixstep::llm;

namespace {

struct Loaded {
    GGUFFile file;
    Vocab vocab;
    explicit Loaded(const std::string& path) : file(GGUFFile::open(path)), vocab(Vocab::from_gguf(file)) {}
};

const Loaded& spm() {
    static const Loaded l(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-llama-spm.gguf");
    return l;
}
const Loaded& gpt2() {
    static const Loaded l(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-gpt-2.gguf");
    return l;
}

[[noreturn]] void fail(const Vocab& v, const char* what, std::string_view text) {
    std::fprintf(stderr, "fuzz_tokenizer: %s: %s for a text of %zu bytes\n", v.model().c_str(), what, text.size());
    std::abort();
}

void check(const Vocab& v, std::string_view text, bool add_special, bool parse_special, bool must_round_trip) {
    const auto ids = v.tokenize(text, add_special, parse_special);
    for (TokenId id : ids)
        if (!v.valid(id)) fail(v, "invalid token id", text);
    const std::string back = v.detokenize(ids, /*remove_special=*/add_special);
    if (must_round_trip && back != text) fail(v, "round trip differs", text);
    if (!add_special) {  // special tokens in the text included: the space after one goes in both
        StreamingDetokenizer d(v, /*strip_leading_space=*/true, /*unparse_special=*/true);
        std::string streamed;
        for (TokenId id : ids) streamed += d.push(id);
        streamed += d.flush();
        if (streamed != back) fail(v, "streamed decoding differs", text);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t flags = data[0];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const bool add_special = flags & 1;
    const bool parse_special = flags & 2;
    check(gpt2().vocab, text, add_special, parse_special, true);
    const bool has_escape = text.find("\xE2\x96\x81") != std::string_view::npos;
    check(spm().vocab, text, add_special, parse_special, !has_escape);
    return 0;
}
