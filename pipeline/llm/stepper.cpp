#include "pipeline/llm/stepper.h"

#include <algorithm>
#include <chrono>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"

namespace sixstep::llm {

Stepper::Stepper(Backend& backend, KvCache& kv) : backend_(backend), kv_(kv) {}

Stepper::~Stepper() {
    while (!attached_.empty()) detach(*attached_.back());
}

void Stepper::attach(Generation& g) {
    if (g.stepper_) throw Error("generation: already attached to a stepper");
    const int n_ctx = g.params().n_ctx > 0 ? std::min(g.params().n_ctx, kv_.params().n_ctx) : kv_.params().n_ctx;
    check_generation_fits(g.n_prompt(), g.params().n_predict, n_ctx);
    g.seq_ = kv_.add_sequence();
    g.stepper_ = this;
    attached_.push_back(&g);
}

void Stepper::detach(Generation& g) {
    const auto it = std::find(attached_.begin(), attached_.end(), &g);
    if (it == attached_.end()) throw Error("generation: not attached to this stepper");
    attached_.erase(it);
    if (kv_.has_sequence(g.seq_)) kv_.free_sequence(g.seq_);
    g.seq_ = -1;
    g.stepper_ = nullptr;
}

void Stepper::evict(Generation& g) {
    if (g.stepper_ != this) throw Error("generation: not attached to this stepper");
    kv_.truncate(g.seq_, 0);
    g.on_evicted();
}

StepStats Stepper::forward(std::span<const Feed> feeds, TensorObserver* observer) {
    batch_.clear();
    StepStats st;
    std::vector<int> n_fed(feeds.size());
    for (std::size_t f = 0; f < feeds.size(); ++f) {
        Generation& g = *feeds[f].gen;
        if (g.stepper_ != this) throw Error("stepper: a feed's generation is not attached here");
        for (std::size_t e = 0; e < f; ++e)
            if (feeds[e].gen == &g) throw Error("stepper: a generation appears twice in one forward pass");
        const std::span<const int> pending = g.pending();
        const int n = feeds[f].n_tokens > 0 ? std::min<int>(feeds[f].n_tokens, static_cast<int>(pending.size()))
                                            : static_cast<int>(pending.size());
        if (n == 0) throw Error("stepper: a feed has no pending tokens (sample its logits first)");
        const bool last = n == static_cast<int>(pending.size());
        for (int i = 0; i < n; ++i) batch_.add(pending[i], g.n_past() + i, g.seq(), last && i == n - 1);
        n_fed[f] = n;
        st.n_outputs += last ? 1 : 0;
    }
    st.n_tokens = batch_.size();
    st.n_sequences = static_cast<int>(feeds.size());

    const auto t0 = std::chrono::steady_clock::now();
    backend_.forward(kv_, batch_, logits_, observer);
    st.ms = ms_since(t0);

    const std::size_t n_vocab = static_cast<std::size_t>(backend_.model().hparams().n_vocab);
    std::size_t row = 0;
    for (std::size_t f = 0; f < feeds.size(); ++f) {
        Generation& g = *feeds[f].gen;
        const bool last = n_fed[f] == static_cast<int>(g.pending().size());
        std::span<const float> logits;
        if (last) logits = std::span<const float>(logits_).subspan(row++ * n_vocab, n_vocab);
        g.on_forward(n_fed[f], st.ms, logits);
    }
    return st;
}

StepStats Stepper::forward_all(TensorObserver* observer) {
    std::vector<Feed> feeds;
    for (Generation* g : attached_)
        if (!g->pending().empty()) feeds.push_back({g, 0});
    if (feeds.empty()) throw Error("stepper: nothing to run (every generation is done or waits to sample)");
    return forward(feeds, observer);
}

}  // namespace sixstep::llm
