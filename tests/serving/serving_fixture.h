// Shared by the serving tests: the tiny random-weight model (tiny_model.h,
// real forward passes), and an "echo" backend whose next token is a pure
// function of every token its KV cache holds for the sequence — so it runs thousands of
// requests in a second, and any wrong block (a bad prefix-cache hit, a
// preempted request resumed on someone else's memory) changes the output.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tiny_model.h"

#include "pipeline/llm/backend.h"
#include "pipeline/llm/batch.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/scheduler.h"
#include "pipeline/tools/random_model.h"

namespace sixstep::test {

// The echo model's next token after tokens[0..n): a hash of all of them.
inline int echo_next(const std::vector<int>& tokens, std::size_t n, int n_vocab) {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<std::uint64_t>(tokens[i] + 1)) * 1099511628211ULL;
    return static_cast<int>(h % static_cast<std::uint64_t>(n_vocab - 1));  // never the last id
}

// What a request gets from the echo model alone: the whole truth, computed directly.
inline std::vector<int> echo_alone(std::vector<int> tokens, int n_new, int n_vocab) {
    std::vector<int> out;
    for (int i = 0; i < n_new; ++i) {
        out.push_back(echo_next(tokens, tokens.size(), n_vocab));
        tokens.push_back(out.back());
    }
    return out;
}

// Stores each token in element 0 of its K row and reads the sequence's tokens
// back from the cache to choose the next one.
class EchoBackend : public llm::Backend {
public:
    explicit EchoBackend(std::shared_ptr<const llm::LlamaModel> model) : model_(std::move(model)) {}
    std::string name() const override { return "echo"; }
    const llm::LlamaModel& model() const override { return *model_; }
    void forward(llm::KvCache& kv, const llm::Batch& batch, std::vector<float>& logits,
                 llm::TensorObserver* observer) override {
        const int n_vocab = model_->hparams().n_vocab;
        const int n_out = llm::prepare_batch(n_vocab, kv, batch);
        logits.assign(static_cast<std::size_t>(n_out) * static_cast<std::size_t>(n_vocab), 0.0f);
        int row = 0;
        for (int i = 0; i < batch.size(); ++i) {
            kv.k(0, batch.seq[i], batch.pos[i])[0] = static_cast<float>(batch.token[i]);
            if (!batch.logits[i]) continue;
            std::vector<int> seen;
            for (int p = 0; p <= batch.pos[i]; ++p) seen.push_back(static_cast<int>(kv.k(0, batch.seq[i], p)[0]));
            logits[static_cast<std::size_t>(row++) * static_cast<std::size_t>(n_vocab) +
                   static_cast<std::size_t>(echo_next(seen, seen.size(), n_vocab))] = 1.0f;
        }
        llm::commit_batch(kv, batch, observer);
    }

private:
    std::shared_ptr<const llm::LlamaModel> model_;
};

// A request written out in a test.
inline serving::RequestSpec request(int id, double arrival_ms, std::vector<int> prompt, int max_tokens,
                                    std::string origin = "") {
    serving::RequestSpec r;
    r.id = id;
    r.arrival_ms = arrival_ms;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.origin = std::move(origin);
    return r;
}

inline std::unique_ptr<llm::KvCache> make_pool(const llm::Backend& backend, int n_blocks, int block_size) {
    llm::KvCacheParams kp = llm::kv_cache_params(backend.model().hparams(), 0, 1, block_size);
    kp.n_blocks = n_blocks;
    return backend.make_kv_cache(kp);
}

// The scheduler over the echo backend, as the exact-arithmetic tests set it
// up: a pool of n_blocks × block_size positions, at most max_batch running,
// every request generating all its max_tokens (no end-of-text stop), each
// pass costing what `cost` says.
struct EchoScheduler {
    TinyModel m;
    EchoBackend echo{m.model};
    std::unique_ptr<llm::KvCache> kv;
    serving::Scheduler s;
    EchoScheduler(int n_blocks, int block_size, int max_batch, serving::StepCostModel cost, bool prefix_cache = false)
        : kv(make_pool(echo, n_blocks, block_size)),
          s(echo, *kv, *m.codec, params(max_batch, prefix_cache), std::move(cost)) {}

private:
    static serving::SchedulerParams params(int max_batch, bool prefix_cache) {
        serving::SchedulerParams p;
        p.max_batch = max_batch;
        p.prefix_cache = prefix_cache;
        p.stop_at_eog = false;
        return p;
    }
};

}  // namespace sixstep::test
