// SentencePiece-style BPE ("llama" vocabularies: Llama 1/2, Mistral, TinyLlama).
//
// The text (spaces already escaped as "▁") starts as one symbol per UTF-8
// character. Every pair of neighbours whose concatenation is a token is a
// candidate merge, scored by that token's score; the best candidate (highest
// score, leftmost on ties) is merged, its new neighbours become candidates,
// and so on until no pair forms a token. Each final symbol is then its token,
// or, when no token spells it, one <0xNN> byte token per byte ("byte
// fallback"), so any input can be encoded.
#include <queue>
#include <string>
#include <vector>

#include "pipeline/llm/unicode.h"
#include "pipeline/llm/vocab.h"

namespace sixstep::llm {

namespace {

struct Symbol {
    int prev, next;  // neighbours in the linked list, -1 at the ends
    size_t offset;   // bytes [offset, offset + n) of the text
    size_t n;        // 0 once merged into its left neighbour
};

struct Candidate {
    int left, right;
    float score;
    size_t n;  // bytes of the merged symbol, to detect stale candidates
};

struct WorseCandidate {
    bool operator()(const Candidate& a, const Candidate& b) const {
        // priority_queue pops the "largest": highest score, then leftmost
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

}  // namespace

void Vocab::tokenize_spm(std::string_view text, std::vector<TokenId>& out) const {
    std::vector<Symbol> syms;
    syms.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        // one symbol per character; a byte that starts no valid character is a
        // symbol of its own and will become a byte token
        size_t n = utf8_valid_length(text, i);
        if (n == 0) n = 1;
        const int idx = static_cast<int>(syms.size());
        syms.push_back({idx - 1, i + n < text.size() ? idx + 1 : -1, i, n});
        i += n;
    }
    if (syms.empty()) return;

    std::priority_queue<Candidate, std::vector<Candidate>, WorseCandidate> queue;
    auto try_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const size_t n = syms[left].n + syms[right].n;
        const auto id = find(text.substr(syms[left].offset, n));
        if (!id) return;
        queue.push({left, right, scores_[static_cast<size_t>(*id)], n});
    };
    for (int i = 1; i < static_cast<int>(syms.size()); ++i) try_pair(i - 1, i);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = syms[c.left];
        Symbol& r = syms[c.right];
        // stale: one side was merged away or grew since this pair was scored
        if (l.n == 0 || r.n == 0 || l.next != c.right || l.n + r.n != c.n) continue;
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) syms[r.next].prev = c.left;
        try_pair(l.prev, c.left);
        try_pair(c.left, l.next);
    }

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
