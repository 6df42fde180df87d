#include "pipeline/serving/scheduler.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "pipeline/core/cpu_wait.h"
#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"

namespace sixstep::serving {

std::string_view batch_policy_name(BatchPolicy policy) {
    return policy == BatchPolicy::static_batching ? "static" : "continuous";
}

std::optional<BatchPolicy> parse_batch_policy(std::string_view name) {
    if (name == "static") return BatchPolicy::static_batching;
    if (name == "continuous") return BatchPolicy::continuous;
    return std::nullopt;
}

std::string_view kv_layout_name(KvLayout layout) { return layout == KvLayout::paged ? "paged" : "contiguous"; }

std::string_view phase_name(Phase phase) {
    switch (phase) {
    case Phase::queued: return "queued";
    case Phase::prefill: return "prefill";
    case Phase::decode: return "decode";
    case Phase::stalled: return "stalled";
    case Phase::preempted: return "preempted";
    }
    return "?";
}

llm::SamplerParams greedy_sampling() {
    llm::SamplerParams p;
    p.temperature = 0;
    return p;
}

// A submitted request and the engine state it needs while it lives.
struct Scheduler::Live {
    RequestSpec spec;
    std::size_t record = 0;                 // index in records_
    std::unique_ptr<llm::Generation> gen;   // from its first admission until it finishes
    std::vector<int> tokens;                // prompt + generated: what its KV positions hold, in order
    std::vector<std::uint64_t> hashes;      // prefix-cache keys of tokens' full blocks
    int n_offered = 0;                      // full blocks already offered to the prefix cache
    double wait_since = 0;                  // when it last started waiting
    Phase wait_phase = Phase::queued;       // queued (never ran) or preempted
};

// One request's share of the next forward pass.
struct Scheduler::Planned {
    Live* r = nullptr;
    int n = 0;  // tokens it reads
    Phase phase = Phase::prefill;
};

namespace {

// Prefill while the prompt (or, after a preemption, everything) is being
// read; decode once it feeds back one sampled token at a time.
Phase feed_phase(const llm::Generation& g) {
    return g.tokens().empty() || g.pending().size() > 1 ? Phase::prefill : Phase::decode;
}

}  // namespace

void check_batch_fits_kv(int max_batch, int n_blocks, int block_size) {
    if (max_batch > n_blocks)
        throw Error(fmt::format("max batch {} is beyond the KV capacity: {} blocks of {} positions hold at most {} "
                                "requests at once (one block each); lower max_batch or raise kv_blocks (--max-batch, "
                                "--kv-blocks on the command line)",
                                max_batch, n_blocks, block_size, n_blocks));
}

Scheduler::Scheduler(llm::Backend& backend, llm::KvCache& kv, const llm::TextCodec& codec,
                     const SchedulerParams& params, StepCostModel cost)
    : backend_(backend), kv_(kv), codec_(codec), params_(params), cost_(std::move(cost)), stepper_(backend, kv) {
    if (!cost_) throw Error("scheduler: no step cost model");
    if (params_.max_batch < 1) throw Error(fmt::format("max batch {}: run at least one request at a time", params_.max_batch));
    if (params_.max_step_tokens < 1)
        throw Error(fmt::format("max step tokens {}: a forward pass must read at least one token", params_.max_step_tokens));
    const int n_blocks = kv_.blocks().n_blocks();
    check_batch_fits_kv(params_.max_batch, n_blocks, kv_.blocks().block_size());
    if (kv_.blocks().n_used() != 0 || !kv_.blocks().sequences().empty())
        throw Error("scheduler: the KV cache must start empty");
    if (params_.prefix_cache && params_.kv_layout == KvLayout::contiguous)
        throw Error("prefix caching shares blocks between requests: it needs the paged KV layout, not contiguous");
    if (params_.prefix_cache) cache_ = std::make_unique<PrefixCache>(kv_.blocks());
    if (params_.kv_layout == KvLayout::contiguous) contiguous_ = std::make_unique<ContiguousAllocator>(n_blocks);
}

Scheduler::~Scheduler() {
    // Requests first (they detach and free their sequences), then the cache's blocks.
    live_.clear();
    cache_.reset();
}

void Scheduler::check(const RequestSpec& s) const {
    const int n_ctx = kv_.params().n_ctx;
    const int n_vocab = backend_.model().hparams().n_vocab;
    const int n_blocks = kv_.blocks().n_blocks();
    const std::string who = s.origin.empty() ? fmt::format("request {}", s.id) : fmt::format("{}: request {}", s.origin, s.id);
    if (!std::isfinite(s.arrival_ms) || s.arrival_ms < 0)
        throw Error(fmt::format("{}: arrival time {} ms must be a number >= 0", who, s.arrival_ms));
    try {
        llm::check_generation_fits(static_cast<int>(s.prompt.size()), s.max_tokens, n_ctx);
    } catch (const Error& e) {
        throw e.with_context(who);
    }
    for (int t : s.prompt)
        if (t < 0 || t >= n_vocab)
            throw Error(fmt::format("{}: token id {} is outside the vocabulary (0..{})", who, t, n_vocab - 1));
    const int n_positions = static_cast<int>(s.prompt.size()) + s.max_tokens - 1;
    const int need = kv_.blocks().blocks_for(n_positions);
    if (need > n_blocks)
        throw Error(fmt::format("{}: needs up to {} KV blocks of {} positions (prompt {} + {} new tokens) but the "
                                "pool holds {}: it could never finish; raise kv_blocks or lower max_tokens (--kv-blocks, "
                                "--max-tokens on the command line)",
                                who, need, kv_.blocks().block_size(), s.prompt.size(), s.max_tokens, n_blocks));
}

void Scheduler::submit(std::vector<RequestSpec> specs) {
    std::set<int> ids;
    for (const RequestRecord& r : records_) ids.insert(r.id);
    for (const RequestSpec& s : specs) {
        try {
            check(s);
        } catch (const Error& e) {
            // "ask for at most N" holds for this request's prompt; a longer
            // one among the rest needs fewer. Say the bound for them all.
            const int n_ctx = kv_.params().n_ctx;
            const auto longest = std::max_element(specs.begin(), specs.end(), [](const RequestSpec& a, const RequestSpec& b) {
                return a.prompt.size() < b.prompt.size();
            });
            const long long all = n_ctx - static_cast<long long>(longest->prompt.size()) + 1;
            const bool too_long = static_cast<long long>(s.prompt.size()) + s.max_tokens - 1 > n_ctx;
            if (too_long && longest->prompt.size() > s.prompt.size() && all >= 1)
                throw Error(fmt::format("{}; for all {} requests, at most {} (request {} has the longest prompt, {} "
                                        "tokens)",
                                        e.what(), specs.size(), all, longest->id, longest->prompt.size()));
            throw;
        }
        if (!ids.insert(s.id).second)
            throw Error(fmt::format("{}request {}: the id is used twice", s.origin.empty() ? "" : s.origin + ": ", s.id));
    }
    for (RequestSpec& s : specs) {
        RequestRecord rec;
        rec.id = s.id;
        rec.arrival_ms = s.arrival_ms;
        rec.n_prompt = static_cast<int>(s.prompt.size());
        rec.max_tokens = s.max_tokens;
        rec.shares_prefix = s.shares_prefix;
        records_.push_back(std::move(rec));
        auto live = std::make_unique<Live>();
        live->record = records_.size() - 1;
        live->tokens = s.prompt;
        live->spec = std::move(s);
        live_.push_back(std::move(live));
    }
    std::stable_sort(live_.begin() + static_cast<std::ptrdiff_t>(next_arrival_), live_.end(),
                     [](const auto& a, const auto& b) { return a->spec.arrival_ms < b->spec.arrival_ms; });
}

void Scheduler::admit_arrivals() {
    while (next_arrival_ < live_.size() && live_[next_arrival_]->spec.arrival_ms <= clock_.now_ms()) {
        Live& r = *live_[next_arrival_++];
        if (records_[r.record].finished()) continue;  // cancelled before it arrived
        r.wait_since = r.spec.arrival_ms;
        r.wait_phase = Phase::queued;
        waiting_.push_back(&r);
    }
}

void Scheduler::add_span(Live& r, Phase phase, double t0, double t1) {
    std::vector<PhaseSpan>& spans = records_[r.record].spans;
    if (!spans.empty() && spans.back().phase == phase && spans.back().t1_ms == t0) {
        spans.back().t1_ms = t1;
        return;
    }
    const bool waiting = phase == Phase::queued || phase == Phase::preempted;
    if (t1 > t0 || !waiting) spans.push_back({phase, t0, t1});
}

bool Scheduler::make_room(int n_blocks) {
    const int free = kv_.n_free_blocks();
    if (free >= n_blocks) return true;
    // Blocks only the prefix cache keeps are free memory with a chance of reuse.
    if (!cache_ || free + cache_->n_evictable() < n_blocks) return false;
    cache_->evict(n_blocks - free);
    return kv_.n_free_blocks() >= n_blocks;
}

void Scheduler::preempt(Live& r) {
    stepper_.evict(*r.gen);
    if (contiguous_ && contiguous_->holds(r.spec.id)) contiguous_->free(r.spec.id);
    running_.erase(std::find(running_.begin(), running_.end(), &r));
    // Back to the front of the queue: it was admitted before anyone waiting.
    waiting_.push_front(&r);
    r.wait_since = clock_.now_ms();
    r.wait_phase = Phase::preempted;
    r.n_offered = 0;
    ++records_[r.record].n_preemptions;
    ++n_preemptions_;
}

void Scheduler::finish(Live& r) {
    RequestRecord& rec = records_[r.record];
    rec.finish_ms = clock_.now_ms();
    rec.stop_reason = r.gen->stop_reason();
    stepper_.detach(*r.gen);
    if (contiguous_ && contiguous_->holds(r.spec.id)) contiguous_->free(r.spec.id);
    running_.erase(std::find(running_.begin(), running_.end(), &r));
    r.gen.reset();
    r.tokens = {};
    r.hashes = {};
    if (observer_.on_finish) observer_.on_finish(rec);
}

bool Scheduler::cancel(int id) {
    const auto it = std::find_if(live_.begin(), live_.end(), [&](const auto& l) { return l->spec.id == id; });
    if (it == live_.end() || records_[(*it)->record].finished()) return false;
    Live& r = **it;
    RequestRecord& rec = records_[r.record];
    if (const auto w = std::find(waiting_.begin(), waiting_.end(), &r); w != waiting_.end()) {
        add_span(r, r.wait_phase, r.wait_since, clock_.now_ms());
        waiting_.erase(w);
    }
    if (const auto run = std::find(running_.begin(), running_.end(), &r); run != running_.end()) running_.erase(run);
    if (r.gen && r.gen->stepper()) stepper_.detach(*r.gen);
    if (contiguous_ && contiguous_->holds(id)) contiguous_->free(id);
    rec.finish_ms = clock_.now_ms();
    rec.stop_reason = llm::StopReason::cancelled;
    r.gen.reset();
    r.tokens = {};
    r.hashes = {};
    if (observer_.on_finish) observer_.on_finish(rec);
    return true;
}

std::vector<RequestRecord> Scheduler::take_finished() {
    std::vector<RequestRecord> done;
    std::vector<std::size_t> new_index(records_.size(), SIZE_MAX);
    std::vector<RequestRecord> kept;
    for (std::size_t i = 0; i < records_.size(); ++i) {
        if (records_[i].finished()) {
            done.push_back(std::move(records_[i]));
        } else {
            new_index[i] = kept.size();
            kept.push_back(std::move(records_[i]));
        }
    }
    records_ = std::move(kept);
    std::vector<std::unique_ptr<Live>> live;
    std::size_t next = 0;
    for (std::size_t i = 0; i < live_.size(); ++i) {
        if (new_index[live_[i]->record] == SIZE_MAX) continue;  // finished: its Generation is already gone
        live_[i]->record = new_index[live_[i]->record];
        if (i < next_arrival_) ++next;
        live.push_back(std::move(live_[i]));
    }
    live_ = std::move(live);
    next_arrival_ = next;
    steps_.clear();
    return done;
}

bool Scheduler::schedule_running(std::vector<Planned>& plan, int& budget) {
    bool preempted = false;
    for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
        Live& r = *running_[i];
        const int n = std::min(static_cast<int>(r.gen->pending().size()), budget);
        for (;;) {
            const int seq = r.gen->seq();
            const int need = kv_.blocks().blocks_for(r.gen->n_past() + n) - static_cast<int>(kv_.block_table(seq).size());
            if (make_room(need)) {
                kv_.reserve(seq, r.gen->n_past() + n);
                plan.push_back({&r, n, feed_phase(*r.gen)});
                budget -= n;
                break;
            }
            // The pool is full: the most recently admitted request gives its
            // blocks back (it may be r itself, which then waits too).
            Live& victim = *running_.back();
            preempt(victim);
            preempted = true;
            if (&victim == &r) break;
        }
    }
    return preempted;
}

void Scheduler::admit_waiting(std::vector<Planned>& plan, int& budget, long long& stranded) {
    const int bs = kv_.blocks().block_size();
    while (!waiting_.empty() && static_cast<int>(running_.size()) < params_.max_batch && budget > 0) {
        Live& r = *waiting_.front();
        const int id = r.spec.id;
        // Contiguous: the whole max length, in one run, before anything else.
        bool reserved_run = false;
        if (contiguous_ && !contiguous_->holds(id)) {
            const int size = kv_.blocks().blocks_for(static_cast<int>(r.spec.prompt.size()) + r.spec.max_tokens - 1);
            if (!contiguous_->allocate(id, size)) {
                // Enough memory in total, but no hole large enough: external fragmentation.
                if (contiguous_->n_free() >= size) stranded = static_cast<long long>(contiguous_->n_free()) * bs;
                return;
            }
            reserved_run = true;
        }
        std::vector<int> hit;
        if (cache_) {
            extend_block_hashes(r.tokens, bs, r.hashes);
            // At least one token must be read, for its logits.
            hit = cache_->match(r.tokens, r.hashes, (static_cast<int>(r.tokens.size()) - 1) / bs);
        }
        const int n_cached = static_cast<int>(hit.size()) * bs;
        const int n = std::min(static_cast<int>(r.tokens.size()) - n_cached, budget);
        const int need = kv_.blocks().blocks_for(n_cached + n) - static_cast<int>(hit.size());
        const int available =
            kv_.n_free_blocks() + (cache_ ? cache_->n_evictable() - cache_->n_evictable_among(hit) : 0);
        if (available < need) {
            if (reserved_run) contiguous_->free(id);
            return;  // first come, first served: nobody overtakes the head of the queue
        }

        if (!r.gen) {
            llm::GenerateParams gp;
            gp.n_predict = r.spec.max_tokens;
            gp.sampling = r.spec.sampling.value_or(params_.sampling);
            gp.stop = r.spec.stop;
            gp.stop_at_eog = params_.stop_at_eog;
            r.gen = std::make_unique<llm::Generation>(codec_, r.spec.prompt, gp);
        }
        if (!r.gen->stepper()) stepper_.attach(*r.gen);
        const int seq = r.gen->seq();
        if (!hit.empty()) {
            kv_.blocks().adopt(seq, hit);
            cache_->touch(hit);
            r.gen->on_cached(n_cached);
        }
        if (!make_room(need)) throw Error("scheduler: blocks counted free were not");  // a bug, never input
        kv_.reserve(seq, n_cached + n);

        RequestRecord& rec = records_[r.record];
        const double now = clock_.now_ms();
        add_span(r, r.wait_phase, r.wait_since, now);
        if (rec.first_scheduled_ms < 0) rec.first_scheduled_ms = now;
        rec.n_cached_tokens += n_cached;
        waiting_.pop_front();
        running_.push_back(&r);
        plan.push_back({&r, n, feed_phase(*r.gen)});
        budget -= n;
    }
}

bool Scheduler::step() {
    admit_arrivals();
    if (running_.empty() && waiting_.empty()) {
        if (next_arrival_ == live_.size()) return false;
        clock_.advance_to(live_[next_arrival_]->spec.arrival_ms);  // idle until the next request
        admit_arrivals();
    }

    // ---- plan the pass -------------------------------------------------------
    const double t0 = clock_.now_ms();
    const bool continuous = params_.policy == BatchPolicy::continuous;
    const bool batch_was_empty = running_.empty();
    int budget = continuous ? params_.max_step_tokens : INT_MAX;
    std::vector<Planned> plan;
    const long long preemptions_before = n_preemptions_;
    const bool preempted = schedule_running(plan, budget);
    long long stranded = 0;
    // Continuous: after a preemption nobody new joins (the pool is short).
    // Static: only an empty engine starts a new batch.
    if (continuous ? !preempted : batch_was_empty) admit_waiting(plan, budget, stranded);
    if (plan.empty()) {
        if (preempted) return true;  // everyone went back to the queue; the next step readmits
        throw Error("scheduler: nothing could run although requests are waiting");  // a bug, never input
    }

    // ---- the forward pass and sampling, measured -----------------------------
    std::vector<llm::Feed> feeds;
    feeds.reserve(plan.size());
    for (const Planned& p : plan) feeds.push_back({p.r->gen.get(), p.n});
    std::optional<WorkTimer> step_timer;  // the wait for a CPU during the pass and the sampling
    if (params_.time_cpu_waits) step_timer.emplace();
    const llm::StepStats st = stepper_.forward(feeds);
    std::vector<Live*> sampled;
    const auto ts = std::chrono::steady_clock::now();
    for (const Planned& p : plan) {
        if (!p.r->gen->has_logits()) continue;
        const llm::TokenEvent& ev = p.r->gen->sample();
        p.r->tokens.push_back(ev.token);
        sampled.push_back(p.r);
        if (observer_.on_token) observer_.on_token(p.r->spec.id, ev);
    }
    const double sample_ms = ms_since(ts);

    StepShape shape;
    shape.n_tokens = st.n_tokens;
    shape.n_sequences = st.n_sequences;
    shape.n_outputs = static_cast<int>(sampled.size());
    shape.forward_ms = st.ms;
    shape.sample_ms = sample_ms;
    shape.cpu_wait_ms = step_timer ? step_timer->waited_ms() : 0;
    for (const Planned& p : plan) {
        if (p.phase == Phase::decode) ++shape.n_decode;
        else shape.n_prefill_tokens += p.n;
    }
    const double cost = cost_(shape);
    clock_.advance(cost);
    const double t1 = clock_.now_ms();

    // ---- records ---------------------------------------------------------------
    for (const Planned& p : plan) {
        records_[p.r->record].n_computed_tokens += p.n;
        add_span(*p.r, p.phase, t0, t1);
    }
    for (Live* r : running_)
        if (std::none_of(plan.begin(), plan.end(), [&](const Planned& p) { return p.r == r; }))
            add_span(*r, Phase::stalled, t0, t1);
    for (Live* r : sampled) {
        RequestRecord& rec = records_[r->record];
        if (rec.token_ms.empty()) rec.first_token_ms = t1;
        rec.token_ms.push_back(t1);
        rec.output.push_back(r->tokens.back());
    }
    if (cache_) {
        const int bs = kv_.blocks().block_size();
        for (const Planned& p : plan) {
            Live& r = *p.r;
            const int n_full = r.gen->n_past() / bs;
            if (n_full <= r.n_offered) continue;
            extend_block_hashes(r.tokens, bs, r.hashes);
            cache_->insert(r.tokens, r.hashes, kv_.block_table(r.gen->seq()), n_full);
            r.n_offered = n_full;
        }
    }

    StepRecord sr;
    sr.t_begin_ms = t0;
    sr.cost_ms = cost;
    sr.shape = shape;
    sr.n_running = static_cast<int>(running_.size());
    sr.n_waiting = static_cast<int>(waiting_.size());
    sr.n_preempted = static_cast<int>(n_preemptions_ - preemptions_before);
    record_kv_use(sr);
    sr.n_slots_stranded = stranded;
    steps_.push_back(sr);

    for (Live* r : sampled)
        if (r->gen->done()) finish(*r);
    return true;
}

void Scheduler::record_kv_use(StepRecord& sr) const {
    // The same figures as kv_snapshot(), without building a view of every
    // block each step: a block is shared only through the prefix cache, and
    // cached blocks are full, so the others each have one owner to count.
    const int bs = kv_.blocks().block_size();
    // Contiguous: a reservation owns its blocks from the pass it is made,
    // though the pool hands them out only as tokens arrive.
    sr.n_blocks_used = contiguous_ ? contiguous_->n_used() : kv_.blocks().n_used();
    sr.n_blocks_cached = cache_ ? cache_->n_evictable() : 0;
    long long filled = cache_ ? static_cast<long long>(cache_->size()) * bs : 0;
    for (const Live* r : running_) {
        const int seq = r->gen->seq();
        const std::vector<int>& table = kv_.block_table(seq);
        const int n = kv_.n_tokens(seq);
        for (std::size_t i = 0; i < table.size(); ++i)
            if (!cache_ || !cache_->cached(table[i]))
                filled += std::clamp(n - static_cast<int>(i) * bs, 0, bs);
    }
    sr.n_slots_filled = filled;
    sr.n_slots_held = static_cast<long long>(sr.n_blocks_used) * bs;
}

void Scheduler::run() {
    while (step()) {
    }
}

RunInfo Scheduler::run_info() const {
    RunInfo info;
    info.params = params_;
    info.n_blocks = kv_.blocks().n_blocks();
    info.block_size = kv_.blocks().block_size();
    // From the first arrival, not from 0: the seconds before it (a trace that
    // starts at 5 s) are no part of the run, and rates divide by its length.
    if (!records_.empty()) info.start_ms = records_.front().arrival_ms;
    for (const RequestRecord& r : records_) {
        info.start_ms = std::min(info.start_ms, r.arrival_ms);
        info.end_ms = std::max(info.end_ms, r.finish_ms);
    }
    info.duration_ms = std::max(0.0, info.end_ms - info.start_ms);
    info.busy_ms = clock_.busy_ms();
    return info;
}

std::vector<KvSeqOwner> Scheduler::seq_owners() const {
    std::vector<KvSeqOwner> owners;
    for (const Live* r : running_) owners.push_back({r->spec.id, r->gen->seq()});
    return owners;
}

KvSnapshot Scheduler::kv_snapshot() const {
    const std::vector<KvSeqOwner> owners = seq_owners();
    return snapshot_kv(kv_.blocks(), owners, cache_.get(), contiguous_.get(), clock_.now_ms());
}

}  // namespace sixstep::serving
