// Batch: the tokens one forward pass reads, from one or several sequences.
//
// Prefill is many tokens of one sequence; decode is one token from each of
// several sequences; a serving step may mix both. Every token attends to
// positions 0..pos of its own sequence, and its keys and values are written
// into the KV cache at pos. Rows with `logits` set produce a row of n_vocab
// logits, in batch order.
//
//     Batch b = Batch::prefill({1, 450, 6635}, seq);   // logits for the last row only
//     b.add(29871, 3, other_seq, true);                // plus a decode row of another sequence
#pragma once
#include <vector>

namespace sixstep::llm {

class KvCache;
class TensorObserver;

struct Batch {
    std::vector<int> token;    // [n] token ids
    std::vector<int> pos;      // [n] positions within their sequence
    std::vector<int> seq;      // [n] KV cache sequence ids
    std::vector<char> logits;  // [n] 1 → output this row's logits

    void add(int token_id, int position, int seq_id, bool want_logits) {
        token.push_back(token_id);
        pos.push_back(position);
        seq.push_back(seq_id);
        logits.push_back(want_logits ? 1 : 0);
    }
    void clear() { token.clear(), pos.clear(), seq.clear(), logits.clear(); }
    int size() const { return static_cast<int>(token.size()); }
    int n_outputs() const;

    // A prefill batch: tokens at positions pos0, pos0+1, … of one sequence;
    // logits for the last one only.
    static Batch prefill(const std::vector<int>& tokens, int seq_id, int pos0 = 0);
};

// What every backend does before and after its arithmetic, so they all
// accept and reject the same batches:
//
// prepare_batch checks a batch against the vocabulary and the cache (token
// ids, positions with no gaps, sequences present, context not exceeded),
// reserves the cache blocks it needs (copying shared ones), and returns the
// number of output rows. When a check fails or the blocks do not fit, no
// block stays reserved. Throws sixstep::Error with a clear message ("KV
// cache full: …", "position 7 of sequence 0 leaves a gap: the sequence holds
// 3 positions"). Then tells the observer the batch begins.
int prepare_batch(int n_vocab, KvCache& kv, const Batch& batch, TensorObserver* observer = nullptr);
// commit_batch marks the batch's positions as filled and tells the observer.
void commit_batch(KvCache& kv, const Batch& batch, TensorObserver* observer);

}  // namespace sixstep::llm
