// SentencePiece-style BPE ("llama" vocabularies: Llama 1/2, Mistral, TinyLlama).
//
// The text (spaces already escaped as "▁") starts as one symbol per UTF-8
// character. Every pair of neighbours whose concatenation is a token is a
// candidate merge, scored by that token's score; the best candidate (highest
// score, leftmost on ties) is merged, its new neighbours become candidates,
// and so on until no pair forms a token. Each final symbol is then its token,
// or, when no token spells it, one <0xNN> byte token per byte ("byte
// fallback"), so any input can be encoded.
#include <string>
#include <vector>

#include "pipeline/llm/vocab/bigram_merge.h"
#include "pipeline/llm/vocab/unicode.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

void Vocab::tokenize_spm(std::string_view text, std::vector<TokenId>& out) const {
    // one symbol per character; a byte that starts no valid character is a
    // symbol of its own and will become a byte token
    std::vector<size_t> lengths;
    lengths.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        size_t n = utf8_valid_length(text, i);
        if (n == 0) n = 1;
        lengths.push_back(n);
        i += n;
    }
    if (lengths.empty()) return;

    // The pair whose concatenation is the best-scored token wins.
    std::vector<MergeSymbol> syms = make_merge_symbols(lengths);
    merge_bigrams(syms, [&](const MergeSymbol& l, const MergeSymbol& r) -> std::optional<double> {
        const auto id = find(text.substr(l.offset, l.n + r.n));
        if (!id) return std::nullopt;
        return scores_[static_cast<size_t>(*id)];
    });

    for (int i = 0; i != -1; i = syms[i].next) {
        const std::string_view piece = text.substr(syms[i].offset, syms[i].n);
        if (const auto id = find(piece)) {
            out.push_back(*id);
            continue;
        }
        for (char ch : piece) {
            const TokenId b = byte_token(static_cast<uint8_t>(ch));
            // a vocabulary without byte tokens cannot spell this byte: <unk>
            if (b >= 0) out.push_back(b);
            else if (unk_ >= 0) out.push_back(unk_);
        }
    }
}

}  // namespace sixstep::llm
