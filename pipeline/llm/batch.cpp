#include "pipeline/llm/batch.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/kv/kv_cache.h"
#include "pipeline/llm/observer.h"

namespace sixstep::llm {

int Batch::n_outputs() const {
    int n = 0;
    for (char c : logits) n += c ? 1 : 0;
    return n;
}

Batch Batch::prefill(const std::vector<int>& tokens, int seq_id, int pos0) {
    Batch b;
    for (std::size_t i = 0; i < tokens.size(); ++i)
        b.add(tokens[i], pos0 + static_cast<int>(i), seq_id, i + 1 == tokens.size());
    return b;
}

namespace {

// Per sequence: the lowest and highest position the batch writes.
std::map<int, std::pair<int, int>> span_per_sequence(const Batch& batch) {
    std::map<int, std::pair<int, int>> span;
    for (int i = 0; i < batch.size(); ++i) {
        auto [it, fresh] = span.emplace(batch.seq[i], std::make_pair(batch.pos[i], batch.pos[i]));
        if (!fresh) {
            it->second.first = std::min(it->second.first, batch.pos[i]);
            it->second.second = std::max(it->second.second, batch.pos[i]);
        }
    }
    return span;
}

}  // namespace

int prepare_batch(int n_vocab, KvCache& kv, const Batch& batch, TensorObserver* observer) {
    const int n = batch.size();
    if (n == 0) throw Error("forward: empty batch (no tokens)");
    if (static_cast<int>(batch.pos.size()) != n || static_cast<int>(batch.seq.size()) != n ||
        static_cast<int>(batch.logits.size()) != n)
        throw Error("forward: batch arrays have different lengths");
    std::map<int, int> next;  // seq → next position without a gap
    for (int i = 0; i < n; ++i) {
        const int s = batch.seq[i];
        if (batch.token[i] < 0 || batch.token[i] >= n_vocab)
            throw Error(fmt::format("forward: token id {} is outside the vocabulary (0..{})", batch.token[i],
                                    n_vocab - 1));
        if (!kv.has_sequence(s)) throw Error(fmt::format("forward: sequence {} is not in the KV cache", s));
        auto it = next.find(s);
        if (it == next.end()) it = next.emplace(s, kv.n_tokens(s)).first;
        const int p = batch.pos[i];
        if (p < 0 || p > it->second)
            throw Error(fmt::format("forward: position {} of sequence {} leaves a gap: the sequence holds {} positions",
                                    p, s, it->second));
        if (p == it->second) ++it->second;
    }
    // All or nothing: if one sequence's blocks do not fit, the ones already
    // reserved for this batch go back to the pool.
    const auto spans = span_per_sequence(batch);
    for (auto it = spans.begin(); it != spans.end(); ++it) {
        try {
            kv.reserve(it->first, it->second.first, it->second.second + 1);
        } catch (...) {
            for (auto undo = spans.begin(); undo != it; ++undo) kv.truncate(undo->first, kv.n_tokens(undo->first));
            throw;
        }
    }
    if (observer) observer->batch_begins(batch);
    return batch.n_outputs();
}

void commit_batch(KvCache& kv, const Batch& batch, TensorObserver* observer) {
    for (const auto& [s, range] : span_per_sequence(batch)) {
        kv.commit(s, range.second + 1);
        if (observer) observer->kv_fill(s, range.first, range.second - range.first + 1, kv.n_tokens(s));
    }
}

}  // namespace sixstep::llm
