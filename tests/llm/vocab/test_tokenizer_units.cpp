// Tokenizer building blocks: Unicode tables, UTF-8, the GPT-2 byte mapping,
// pre-tokenizer splits, special tokens, BOS/EOS, streaming decoding, and
// clear errors for broken vocabularies.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/core/error.h"
#include "pipeline/llm/vocab/detokenizer.h"
#include "pipeline/llm/gguf/gguf_writer.h"
#include "pipeline/llm/vocab/pretokenizer.h"
#include "pipeline/llm/vocab/unicode.h"
#include "pipeline/llm/vocab/vocab.h"

using namespace sixstep::llm;

namespace {

std::vector<std::string> split(std::string_view text, PreTokenizer p) {
    std::vector<std::string> out;
    for (auto w : pretokenize(text, p)) out.emplace_back(w);
    return out;
}

using Words = std::vector<std::string>;

const Vocab& spm_vocab() {
    static const GGUFFile f = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-llama-spm.gguf");
    static const Vocab v = Vocab::from_gguf(f);
    return v;
}

const Vocab& gpt2_vocab() {
    static const GGUFFile f = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-gpt-2.gguf");
    static const Vocab v = Vocab::from_gguf(f);
    return v;
}

std::vector<std::string> texts_of(const Vocab& v, const std::vector<TokenId>& ids) {
    std::vector<std::string> out;
    for (TokenId id : ids) out.push_back(v.token_text(id));
    return out;
}

std::string vocab_error(const GGUFWriter& w) {
    try {
        const auto bytes = w.to_bytes();
        const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size(), "v.gguf");
        Vocab::from_gguf(f);
    } catch (const sixstep::Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("unicode categories and White_Space") {
    CHECK(unicode_category('A') == UnicodeCategory::Letter);
    CHECK(unicode_category(0x00E9) == UnicodeCategory::Letter);   // é
    CHECK(unicode_category(0x4E2D) == UnicodeCategory::Letter);   // 中
    CHECK(unicode_category('7') == UnicodeCategory::Number);
    CHECK(unicode_category(0x00BD) == UnicodeCategory::Number);   // ½
    CHECK(unicode_category(0x0301) == UnicodeCategory::Mark);     // combining acute
    CHECK(unicode_category('!') == UnicodeCategory::Punctuation);
    CHECK(unicode_category(0x1F999) == UnicodeCategory::Symbol);  // 🦙
    CHECK(unicode_category(0x0378) == UnicodeCategory::Other);    // unassigned
    CHECK(unicode_is_whitespace(' '));
    CHECK(unicode_is_whitespace('\n'));
    CHECK(unicode_is_whitespace(0x3000));
    CHECK(unicode_is_whitespace(0x00A0));
    CHECK_FALSE(unicode_is_whitespace(0x200B));  // zero width space is not White_Space
    CHECK_FALSE(unicode_is_whitespace('x'));
}

TEST_CASE("UTF-8: lenient decoding keeps every byte, incomplete tails are detected") {
    const auto cs = utf8_decode("a\xC3\xA9\xFF\xE2\x96");
    REQUIRE(cs.size() == 5);
    CHECK(cs[0].cp == 'a');
    CHECK(cs[1].cp == 0xE9);
    CHECK(cs[1].length == 2);
    CHECK(cs[2].cp == kInvalidCodepoint);  // 0xFF
    CHECK(cs[3].cp == kInvalidCodepoint);  // E2 96 cut short: each byte on its own
    CHECK(cs[4].offset == 5);
    CHECK(utf8_valid_length("\xC0\x80", 0) == 0);      // overlong
    CHECK(utf8_valid_length("\xED\xA0\x80", 0) == 0);  // surrogate
    CHECK(utf8_valid_length("\xF4\x90\x80\x80", 0) == 0);  // > U+10FFFF

    CHECK(utf8_incomplete_tail("abc") == 0);
    CHECK(utf8_incomplete_tail("a\xE2") == 1);
    CHECK(utf8_incomplete_tail("a\xE2\x96") == 2);
    CHECK(utf8_incomplete_tail("a\xE2\x96\x81") == 0);
    CHECK(utf8_incomplete_tail("\xF0\x9F\xA6") == 3);
    CHECK(utf8_incomplete_tail("\x80") == 0);      // a stray continuation never completes
    CHECK(utf8_incomplete_tail("\xED\xA0") == 0);  // would be a surrogate
    CHECK(utf8_incomplete_tail("\xC0") == 0);      // C0 never starts a valid sequence
}

TEST_CASE("GPT-2 byte mapping: printable bytes map to themselves, the rest from U+0100") {
    CHECK(gpt2_byte_to_codepoint('A') == 'A');
    CHECK(gpt2_byte_to_codepoint(' ') == 0x120);   // Ġ
    CHECK(gpt2_byte_to_codepoint('\n') == 0x10A);  // Ċ
    CHECK(gpt2_byte_to_codepoint(0) == 0x100);
    CHECK(gpt2_byte_to_utf8(' ') == "\xC4\xA0");
    for (int b = 0; b < 256; ++b) CHECK(gpt2_codepoint_to_byte(gpt2_byte_to_codepoint(static_cast<uint8_t>(b))) == b);
    CHECK(gpt2_codepoint_to_byte(0x20) == -1);  // a space character is not one of the 256
}

TEST_CASE("pre-tokenizer gpt-2 follows its regex") {
    const auto p = PreTokenizer::GPT2;
    CHECK(split("Hello world", p) == Words{"Hello", " world"});
    CHECK(split("  Hello", p) == Words{" ", " Hello"});
    CHECK(split("a\n\nb", p) == Words{"a", "\n", "\n", "b"});
    CHECK(split("x   ", p) == Words{"x", "   "});
    CHECK(split("I'm 123 ok!!", p) == Words{"I", "'m", " 123", " ok", "!!"});
    CHECK(split("don'T", p) == Words{"don", "'", "T"});  // contractions are case-sensitive here
    CHECK(split("(été)", p) == Words{"(", "été", ")"});
    CHECK(split("你好 世界", p) == Words{"你好", " 世界"});
    CHECK(split("½ \xFF!", p) == Words{"½", " \xFF!"});  // an invalid byte is an "other" character
    CHECK(split("", p).empty());
}

TEST_CASE("pre-tokenizer llama3 and qwen2 follow theirs") {
    const auto l = PreTokenizer::LLAMA3;
    CHECK(split("Hello world", l) == Words{"Hello", " world"});
    CHECK(split("don'T", l) == Words{"don", "'T"});  // (?i:...)
    CHECK(split("12345", l) == Words{"123", "45"});
    CHECK(split("12345", PreTokenizer::QWEN2) == Words{"1", "2", "3", "4", "5"});
    CHECK(split("a\n\nb", l) == Words{"a", "\n\n", "b"});
    CHECK(split("(hello)", l) == Words{"(hello", ")"});
    CHECK(split("  hi", l) == Words{" ", " hi"});
    CHECK(split("!!\n\nx", l) == Words{"!!\n\n", "x"});
    CHECK(split("a \n b", l) == Words{"a", " \n", " b"});
    CHECK(pretokenizer_from_name("llama-bpe") == PreTokenizer::LLAMA3);
    CHECK(pretokenizer_from_name("gpt-2") == PreTokenizer::GPT2);
    CHECK_FALSE(pretokenizer_from_name("falcon").has_value());
}

TEST_CASE("pre-tokenizers agree with the original regexes on 400 random texts") {
    // tests/data/tokenizers/pretokenizer-cases.json: splits computed by Python's
    // `regex` module from the original patterns (make_pretokenizer_cases.py)
    std::ifstream in(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/pretokenizer-cases.json");
    REQUIRE(in.good());
    const auto j = nlohmann::json::parse(in);
    const auto& cases = j.at("cases");
    REQUIRE(cases.size() == 400);
    const std::pair<const char*, PreTokenizer> kinds[] = {
        {"gpt-2", PreTokenizer::GPT2}, {"llama3", PreTokenizer::LLAMA3}, {"qwen2", PreTokenizer::QWEN2}};
    int mismatches = 0;
    for (const auto& c : cases) {
        const std::string text = c.at("text").get<std::string>();
        for (const auto& entry : kinds) {
            const auto& name = entry.first;
            const auto& kind = entry.second;
            const auto expected = c.at(name).get<Words>();
            if (split(text, kind) != expected) {
                ++mismatches;
                CAPTURE(name);
                CAPTURE(text);
                CHECK(split(text, kind) == expected);
            }
        }
    }
    CHECK(mismatches == 0);
}

TEST_CASE("SPM: a space is added in front, byte fallback spells what has no token") {
    const Vocab& v = spm_vocab();
    const auto ids = v.tokenize("Hello", false);
    CHECK(texts_of(v, ids) == Words{"▁Hello"});
    // 🦙 has no token: four <0xNN> byte tokens
    const auto llama = v.tokenize("🦙", false);
    CHECK(texts_of(v, llama) == Words{"▁", "<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"});
    CHECK(v.detokenize(llama) == "🦙");
    CHECK(v.token_to_piece(v.find("<0x0A>").value()) == "\n");
    CHECK(v.token_to_piece(v.find("▁the").value()) == " the");
}

TEST_CASE("BOS/EOS and special tokens in the text") {
    const Vocab& spm = spm_vocab();
    CHECK(spm.tokenize("", true).size() == 1);  // just BOS
    CHECK(spm.tokenize("", false).empty());
    const auto with_bos = spm.tokenize("Hi", true);
    CHECK(with_bos.front() == spm.bos());
    CHECK(spm.detokenize(with_bos) == "<s>Hi");
    CHECK(spm.detokenize(with_bos, /*remove_special=*/true) == "Hi");
    CHECK(spm.detokenize(with_bos, false, /*unparse_special=*/false) == "Hi");

    // "<s>" in the text is a control token only when parse_special is on;
    // the text after it gets the SPM space again
    const auto parsed = spm.tokenize("<s>Hi", false, true);
    CHECK(parsed == with_bos);
    const auto literal = spm.tokenize("<s>Hi", false, false);
    CHECK(literal.size() > 2);
    CHECK(std::find(literal.begin(), literal.end(), spm.bos()) == literal.end());
    CHECK(spm.detokenize(literal) == "<s>Hi");

    const Vocab& gpt = gpt2_vocab();
    const auto eot = gpt.tokenize("a<|endoftext|>b", false, true);
    CHECK(texts_of(gpt, eot) == Words{"a", "<|endoftext|>", "b"});
    CHECK(gpt.detokenize(eot) == "a<|endoftext|>b");
    CHECK(gpt.detokenize(eot, false, false) == "ab");
    const auto plain = gpt.tokenize("a<|endoftext|>b", false, false);
    CHECK(std::find(plain.begin(), plain.end(), gpt.eos()) == plain.end());
    CHECK(gpt.detokenize(plain) == "a<|endoftext|>b");
    CHECK(gpt.is_eog(gpt.eos()));
    // remove_special drops only the BOS the tokenizer adds; gpt-2 adds none,
    // so an <|endoftext|> (same id as BOS) written in the text stays
    // (found by fuzz_tokenizer)
    const auto eot_first = gpt.tokenize("<|endoftext|>en", true, true);
    CHECK(eot_first.front() == gpt.bos());
    CHECK(gpt.detokenize(eot_first, /*remove_special=*/true) == "<|endoftext|>en");
}

TEST_CASE("streaming detokenizer holds back a split UTF-8 character until it is complete") {
    const Vocab& spm = spm_vocab();
    const auto ids = spm.tokenize("a🦙b", false);  // ▁a, <0xF0>, <0x9F>, <0xA6>, <0x99>, b
    StreamingDetokenizer d(spm, /*strip_leading_space=*/true);
    std::vector<std::string> outs;
    for (TokenId id : ids) outs.push_back(d.push(id));
    REQUIRE(outs.size() == 6);
    CHECK(outs == Words{"a", "", "", "", "🦙", "b"});
    CHECK(d.flush().empty());

    // byte-level BPE: the emoji's bytes are spread over several tokens too
    const Vocab& gpt = gpt2_vocab();
    const std::string text = "Hi 🦙🦙 ok";
    StreamingDetokenizer g(gpt);
    std::string streamed;
    for (TokenId id : gpt.tokenize(text, false)) {
        const std::string piece = g.push(id);
        CHECK(utf8_incomplete_tail(piece) == 0);
        for (const auto& c : utf8_decode(piece)) CHECK(c.cp != kInvalidCodepoint);
        streamed += piece;
    }
    streamed += g.flush();
    CHECK(streamed == text);

    // an incomplete character at the very end comes out on flush
    StreamingDetokenizer h(spm);
    CHECK(h.push(spm.find("<0xE2>").value()).empty());
    CHECK(h.pending() == 1);
    CHECK(h.flush() == "\xE2");
    // a byte that can never start a character is not held back
    CHECK(h.push(spm.find("<0xFF>").value()) == "\xFF");
}

TEST_CASE("the streamed text reads as detokenize does, after special tokens too") {
    const Vocab& spm = spm_vocab();
    // tokenize puts a space in front of each text fragment: the first, and
    // each one after a special token ("world" and " again" below)
    const auto ids = spm.tokenize("Hello</s>world <s> again", /*add_special=*/true, /*parse_special=*/true);
    const std::string whole = spm.detokenize(ids);
    CHECK(whole == "<s>Hello</s>world <s> again");
    StreamingDetokenizer d(spm, /*strip_leading_space=*/true, /*unparse_special=*/true);
    std::string streamed;
    for (TokenId id : ids) streamed += d.push(id);
    CHECK(streamed + d.flush() == whole);

    // continuing after a prompt: the first token keeps its space, a token
    // after a generated special token does not
    const auto prompt = spm.tokenize("Hello", true);
    const auto generated = spm.tokenize("there</s>world", false, true);  // ▁there </s> ▁world
    StreamingDetokenizer g(spm, /*strip_leading_space=*/false, /*unparse_special=*/true);
    std::string continued;
    for (TokenId id : generated) continued += g.push(id);
    continued += g.flush();
    CHECK(continued == " there</s>world");
    std::vector<TokenId> all(prompt.begin(), prompt.end());
    all.insert(all.end(), generated.begin(), generated.end());
    CHECK(spm.detokenize(prompt) + continued == spm.detokenize(all));
}

TEST_CASE("a tiny hand-made SPM vocabulary merges by score") {
    GGUFWriter w;
    std::vector<std::string> tokens{"<unk>", "<s>", "</s>", "▁", "a", "b", "ab", "▁ab", "ba", "<0x63>"};
    std::vector<float> scores{0, 0, 0, -5, -6, -6, -1, -2, -0.5f, 0};
    std::vector<int32_t> types{2, 3, 3, 1, 1, 1, 1, 1, 1, 6};
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.scores", scores);
    w.set("tokenizer.ggml.token_type", types);
    const auto bytes = w.to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size());
    const Vocab v = Vocab::from_gguf(f);
    // "▁aba": "ba" (-0.5) beats "ab" (-1): ▁ a [ba] -> no more pairs
    CHECK(texts_of(v, v.tokenize("aba", false)) == Words{"▁", "a", "ba"});
    // "▁ab": ab (-1), then ▁ab (-2)
    CHECK(texts_of(v, v.tokenize("ab", false)) == Words{"▁ab"});
    // "c" has no token but a byte token; "d" has neither: <unk>
    CHECK(texts_of(v, v.tokenize("c", false)) == Words{"▁", "<0x63>"});
    CHECK(texts_of(v, v.tokenize("d", false)) == Words{"▁", "<unk>"});
}

TEST_CASE("a tiny hand-made byte-level BPE vocabulary merges by rank") {
    GGUFWriter w;
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(gpt2_byte_to_utf8(static_cast<uint8_t>(b)));
    tokens.push_back("ab");
    tokens.push_back("bc");
    tokens.push_back("Ġab");
    w.set("tokenizer.ggml.model", "gpt2");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.merges", std::vector<std::string>{"b c", "a b", "Ġ ab"});
    const auto bytes = w.to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size());
    const Vocab v = Vocab::from_gguf(f);
    CHECK(texts_of(v, v.tokenize("abc", false)) == Words{"a", "bc"});  // "b c" has the lower rank
    CHECK(texts_of(v, v.tokenize("ab ab", false)) == Words{"ab", "Ġab"});
    CHECK(v.detokenize(v.tokenize("ab ab\x01", false)) == "ab ab\x01");
}

TEST_CASE("byte-level BPE: a merge whose result is not a token falls back to one token per byte") {
    GGUFWriter w;
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(gpt2_byte_to_utf8(static_cast<uint8_t>(b)));
    w.set("tokenizer.ggml.model", "gpt2");
    w.set("tokenizer.ggml.tokens", tokens);
    // Neither "ab" nor "é" (bytes C3 A9) is a token, though a merge makes each.
    const std::string e_acute = gpt2_byte_to_utf8(0xC3) + " " + gpt2_byte_to_utf8(0xA9);
    w.set("tokenizer.ggml.merges", std::vector<std::string>{"a b", e_acute});
    const auto bytes = w.to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size());
    const Vocab v = Vocab::from_gguf(f);
    CHECK(texts_of(v, v.tokenize("abc", false)) == Words{"a", "b", "c"});
    CHECK(v.tokenize("\xC3\xA9", false) == std::vector<TokenId>{0xC3, 0xA9});  // token id b is byte b here
    CHECK(v.detokenize(v.tokenize("abc caf\xC3\xA9", false)) == "abc caf\xC3\xA9");
}

TEST_CASE("llama-bpe (Llama 3): a word that is a token is taken whole, digits go in threes") {
    GGUFWriter w;
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(gpt2_byte_to_utf8(static_cast<uint8_t>(b)));
    tokens.push_back("Ġhello");  // reachable by no merge
    tokens.push_back("12");
    w.set("tokenizer.ggml.model", "gpt2");
    w.set("tokenizer.ggml.pre", "llama-bpe");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.merges", std::vector<std::string>{"1 2"});
    const auto bytes = w.to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size());
    const Vocab v = Vocab::from_gguf(f);
    CHECK(v.pretokenizer() == PreTokenizer::LLAMA3);
    CHECK(texts_of(v, v.tokenize("a hello", false)) == Words{"a", "Ġhello"});
    CHECK(texts_of(v, v.tokenize("12312", false)) == Words{"12", "3", "12"});  // "123" | "12"
}

TEST_CASE("broken vocabularies give one clear error") {
    GGUFWriter w;
    w.set("tokenizer.ggml.model", "bert");
    CHECK(vocab_error(w) == "v.gguf: error loading the vocabulary: tokenizer.ggml.model \"bert\" is not supported "
                            "(sixstep knows \"llama\" and \"gpt2\")");
    w.set("tokenizer.ggml.model", "llama");
    CHECK(vocab_error(w) == "v.gguf: error loading the vocabulary: key tokenizer.ggml.tokens: missing");
    w.set("tokenizer.ggml.tokens", std::vector<std::string>{"<unk>", "<s>", "</s>"});
    w.set("tokenizer.ggml.scores", std::vector<float>{0, 0});
    CHECK(vocab_error(w) ==
          "v.gguf: error loading the vocabulary: tokenizer.ggml.scores has 2 entries for 3 tokens");
    w.set("tokenizer.ggml.scores", std::vector<float>{0, 0, 0});
    w.set("tokenizer.ggml.bos_token_id", uint32_t(7));
    CHECK(vocab_error(w) == "v.gguf: error loading the vocabulary: tokenizer.ggml.bos_token_id = 7 is not a token "
                            "(the vocabulary has 3)");
    w.set("tokenizer.ggml.bos_token_id", uint32_t(1));
    CHECK(vocab_error(w) == "(no error)");

    GGUFWriter b;
    b.set("tokenizer.ggml.model", "gpt2");
    b.set("tokenizer.ggml.pre", "falcon");
    b.set("tokenizer.ggml.tokens", std::vector<std::string>{"a"});
    CHECK(vocab_error(b) == "v.gguf: error loading the vocabulary: tokenizer.ggml.pre \"falcon\" is not supported "
                            "(sixstep knows gpt-2, llama-bpe/llama3 and qwen2)");
    b.set("tokenizer.ggml.pre", "gpt-2");
    b.set("tokenizer.ggml.merges", std::vector<std::string>{"ab"});
    CHECK(vocab_error(b) == "v.gguf: error loading the vocabulary: tokenizer.ggml.merges[0] = \"ab\" is not \"left right\"");
}
