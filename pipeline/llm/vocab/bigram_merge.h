// The merge loop both BPE tokenizers share. A word starts as a list of
// symbols (characters or bytes); every pair of neighbours that the vocabulary
// knows is a candidate; the best candidate is merged, its new neighbours
// become candidates, and so on until no pair is left. The tokenizers differ
// only in what "best" means — SentencePiece: the highest token score; GPT-2
// BPE: the earliest merge rule — so each passes its own `priority`.
#pragma once
#include <cstddef>
#include <optional>
#include <queue>
#include <vector>

namespace sixstep::llm {

struct MergeSymbol {
    int prev, next;  // neighbours in the linked list, -1 at the ends
    size_t offset;   // bytes [offset, offset + n) of the word
    size_t n;        // 0 once merged into its left neighbour
};

// One symbol per unit: `lengths` are the byte lengths of the word's units.
inline std::vector<MergeSymbol> make_merge_symbols(const std::vector<size_t>& lengths) {
    std::vector<MergeSymbol> syms;
    syms.reserve(lengths.size());
    size_t offset = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
        const int idx = static_cast<int>(i);
        syms.push_back({idx - 1, i + 1 < lengths.size() ? idx + 1 : -1, offset, lengths[i]});
        offset += lengths[i];
    }
    return syms;
}

// Merges `syms` in place. `priority(left, right)` returns how good merging
// the two neighbours is (higher is better), or nullopt when the pair is not
// in the vocabulary. Ties go to the leftmost pair. Afterwards the surviving
// symbols are linked from index 0 through `next`.
template <class Priority>
void merge_bigrams(std::vector<MergeSymbol>& syms, Priority&& priority) {
    struct Candidate {
        int left, right;
        double priority;
        size_t n;  // bytes of the merged symbol, to notice stale candidates
    };
    struct Worse {
        bool operator()(const Candidate& a, const Candidate& b) const {
            return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, Worse> queue;
    auto try_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        if (const std::optional<double> p = priority(syms[left], syms[right]))
            queue.push({left, right, *p, syms[left].n + syms[right].n});
    };
    for (int i = 1; i < static_cast<int>(syms.size()); ++i) try_pair(i - 1, i);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        MergeSymbol& l = syms[c.left];
        MergeSymbol& r = syms[c.right];
        // stale: one side was merged away or grew since this pair was scored
        if (l.n == 0 || r.n == 0 || l.next != c.right || l.n + r.n != c.n) continue;
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) syms[r.next].prev = c.left;
        try_pair(l.prev, c.left);
        try_pair(c.left, l.next);
    }
}

}  // namespace sixstep::llm
