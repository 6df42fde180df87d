// Byte-level BPE ("gpt2" vocabularies: GPT-2, Llama 3, Qwen 2, the bundled model).
//
// The pre-tokenizer splits the text into words. Each byte of a word is shown
// as one printable character (GPT-2's byte mapping, unicode.h), so the
// vocabulary never needs raw bytes; "Ġ" is a space. Within a word, the
// symbols start as those characters and the adjacent pair with the lowest
// merge rank (the earliest line of tokenizer.ggml.merges) is merged, leftmost
// first on ties, until no pair has a rank. Each final symbol is a token.
#include <string>
#include <vector>

#include "pipeline/llm/vocab/bigram_merge.h"
#include "pipeline/llm/vocab/unicode.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

void Vocab::tokenize_bpe(std::string_view text, std::vector<TokenId>& out) const {
    for (std::string_view word : pretokenize(text, pre_type_)) bpe_word(word, out);
}

void Vocab::bpe_word(std::string_view raw, std::vector<TokenId>& out) const {
    // bytes -> printable characters; one symbol per byte
    std::string word;
    word.reserve(raw.size() * 2);
    std::vector<size_t> lengths;
    lengths.reserve(raw.size());
    for (const char c : raw) {
        const std::string& ch = gpt2_byte_to_utf8(static_cast<uint8_t>(c));
        lengths.push_back(ch.size());
        word += ch;
    }
    if (lengths.empty()) return;

    if (ignore_merges_) {  // Llama 3: a whole word that is a token is used as is
        if (const auto id = find(word)) {
            out.push_back(*id);
            return;
        }
    }

    // The earliest merge rule wins: priority = −rank.
    std::vector<MergeSymbol> syms = make_merge_symbols(lengths);
    std::string key;
    merge_bigrams(syms, [&](const MergeSymbol& l, const MergeSymbol& r) -> std::optional<double> {
        key.assign(word, l.offset, l.n);
        key += '\0';
        key.append(word, r.offset, r.n);
        const auto it = merge_rank_.find(key);
        if (it == merge_rank_.end()) return std::nullopt;
        return -static_cast<double>(it->second);
    });

    for (int i = 0; i != -1; i = syms[i].next) {
        const std::string_view piece = std::string_view(word).substr(syms[i].offset, syms[i].n);
        if (const auto id = find(piece)) {
            out.push_back(*id);
            continue;
        }
        // A merge produced a symbol that is not a token (a broken vocabulary):
        // fall back to one token per byte so nothing is lost.
        for (const auto& u : utf8_decode(piece)) {
            const int b = u.cp == kInvalidCodepoint ? -1 : gpt2_codepoint_to_byte(u.cp);
            const TokenId t = b >= 0 ? byte_token(static_cast<uint8_t>(b)) : -1;
            if (t >= 0) out.push_back(t);
            else if (unk_ >= 0) out.push_back(unk_);
        }
    }
}

}  // namespace sixstep::llm
