// Byte-level BPE ("gpt2" vocabularies: GPT-2, Llama 3, Qwen 2, the bundled model).
//
// The pre-tokenizer splits the text into words. Each byte of a word is shown
// as one printable character (GPT-2's byte mapping, unicode.h), so the
// vocabulary never needs raw bytes; "Ġ" is a space. Within a word, the
// symbols start as those characters and the adjacent pair with the lowest
// merge rank (the earliest line of tokenizer.ggml.merges) is merged, leftmost
// first on ties, until no pair has a rank. Each final symbol is a token.
#include <queue>
#include <string>
#include <vector>

#include "pipeline/llm/unicode.h"
#include "pipeline/llm/vocab.h"

namespace sixstep::llm {

namespace {

struct Symbol {
    int prev, next;
    size_t offset, n;  // bytes of the mapped word; n = 0 once merged away
};

struct Candidate {
    int left, right;
    int32_t rank;
    size_t n;
};

struct WorseCandidate {
    bool operator()(const Candidate& a, const Candidate& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);  // lowest rank, then leftmost
    }
};

}  // namespace

void Vocab::tokenize_bpe(std::string_view text, std::vector<TokenId>& out) const {
    for (std::string_view word : pretokenize(text, pre_type_)) bpe_word(word, out);
}

void Vocab::bpe_word(std::string_view raw, std::vector<TokenId>& out) const {
    // bytes -> printable characters; one symbol per byte
    std::string word;
    word.reserve(raw.size() * 2);
    std::vector<Symbol> syms;
    syms.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
        const std::string& ch = gpt2_byte_to_utf8(static_cast<uint8_t>(raw[i]));
        const int idx = static_cast<int>(syms.size());
        syms.push_back({idx - 1, i + 1 < raw.size() ? idx + 1 : -1, word.size(), ch.size()});
        word += ch;
    }
    if (syms.empty()) return;

    if (ignore_merges_) {  // Llama 3: a whole word that is a token is used as is
        if (const auto id = find(word)) {
            out.push_back(*id);
            return;
        }
    }

    std::priority_queue<Candidate, std::vector<Candidate>, WorseCandidate> queue;
    std::string key;
    auto try_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        key.assign(word, syms[left].offset, syms[left].n);
        key += '\0';
        key.append(word, syms[right].offset, syms[right].n);
        const auto it = merge_rank_.find(key);
        if (it == merge_rank_.end()) return;
        queue.push({left, right, it->second, syms[left].n + syms[right].n});
    };
    for (int i = 1; i < static_cast<int>(syms.size()); ++i) try_pair(i - 1, i);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = syms[c.left];
        Symbol& r = syms[c.right];
        if (l.n == 0 || r.n == 0 || l.next != c.right || l.n + r.n != c.n) continue;  // stale
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) syms[r.next].prev = c.left;
        try_pair(l.prev, c.left);
        try_pair(c.left, l.next);
    }

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
