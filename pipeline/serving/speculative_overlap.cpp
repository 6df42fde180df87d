// Overlapped speculative decoding (SpeculativeParams::overlap): the draft
// runs ahead on a thread of its own while the target verifies, instead of
// the two taking turns on the same cores. See speculative.h for the rule
// and for why this pays on a small target.
//
// The two threads share one text: `committed` (what both agree on: the
// prompt and every emitted token) followed by `proposals` (the draft's
// guesses beyond it, each with the distribution q it was drawn from). The
// draft appends a proposal after each pass, up to `ahead` of them. The target
// takes up to k from the front, verifies them in one pass and commits:
//   - the accepted proposals move from `proposals` to `committed`;
//   - the token that follows (a correction, or the bonus from the last row)
//     moves over too when it equals the next proposal: the draft's guesses
//     beyond it continue exactly this text, so they stay;
//   - otherwise the remaining proposals are thrown away and `epoch` goes up,
//     so a draft pass still in flight (which continues a text that is no
//     longer there) drops its result.
// With nothing to draft (it is `ahead`), the draft's thread helps the
// target's pass in flight (Backend::help) until the target commits.
//
// Every proposal the target sees was drawn from q given exactly the text in
// front of it, so the rule of speculative.h applies unchanged and every
// emitted token is distributed as the target's sampler would draw it; greedy,
// the text is the target's own. What the clock decides (how many proposals
// are ready when a verify starts; whether a token comes out as a checked
// proposal or as a bonus) changes which random numbers are drawn, so sampled
// runs are not repeatable draw for draw; greedy runs are.
//
// Waiting: a pass of either model here takes tens to hundreds of
// microseconds, and waking a sleeping thread through the OS costs as much
// (up to ~165 µs measured on a 2-vCPU VM), so each side spins (with pause
// instructions) for up to spin_for before it sleeps.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/llm/sampler_dist.h"
#include "pipeline/serving/speculative.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SIXSTEP_SPEC_PAUSE() _mm_pause()
#else
#define SIXSTEP_SPEC_PAUSE() std::this_thread::yield()
#endif

namespace sixstep::serving {

using namespace sixstep::llm;

namespace {

using Clock = std::chrono::steady_clock;

// Longer than a verify of a few rows of a small model (the draft waits that
// long when it is `ahead`), short enough that a caller who stops reading the
// stream does not leave a core spinning for long.
constexpr auto spin_for = std::chrono::milliseconds(2);

struct Proposal {
    int token = 0;
    std::vector<float> q;  // the draft's sampler distribution it was drawn from
};

// The state both threads share, under `mutex`. Every change bumps `version`
// (spinners watch it) and wakes sleepers.
struct Shared {
    std::mutex mutex;
    std::condition_variable changed_cv;
    std::atomic<std::uint64_t> version{0};
    int sleepers = 0;

    std::vector<int> committed;      // prompt + emitted tokens
    std::deque<Proposal> proposals;  // the draft's guesses beyond `committed`
    std::uint64_t epoch = 0;         // bumped when proposals are thrown away
    std::size_t ahead = 1;           // the draft stops at this many proposals
    std::size_t text_limit = 0;      // no proposal at or beyond this position
    bool stop = false;
    std::exception_ptr draft_error;
    int n_draft_passes = 0;
    double draft_ms = 0;

    // The lock is held. Tells the other side that something changed.
    void changed() {
        version.fetch_add(1);
        if (sleepers > 0) changed_cv.notify_all();
    }

    // The lock is held on entry and on return; returns once ready() holds.
    template <typename Ready>
    void wait(std::unique_lock<std::mutex>& lock, const Ready& ready) {
        const auto start = Clock::now();
        while (!ready()) {
            const std::uint64_t seen = version.load();
            if (Clock::now() - start < spin_for) {
                lock.unlock();
                for (int pauses = 1; version.load() == seen && Clock::now() - start < spin_for;
                     pauses = std::min(2 * pauses, 64))
                    for (int i = 0; i < pauses; ++i) SIXSTEP_SPEC_PAUSE();
                lock.lock();
            } else {
                ++sleepers;
                changed_cv.wait(lock, [&] { return version.load() != seen; });
                --sleepers;
            }
        }
    }
};

std::size_t common_prefix(const std::vector<int>& a, const std::vector<int>& b) {
    const std::size_t n = std::min(a.size(), b.size());
    std::size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

// The draft's thread: continue the shared text by one proposal at a time.
void draft_ahead(Shared& s, Backend& draft_model, KvCache& kv, int seq, const SamplerParams& sampling, std::uint64_t seed,
                 Backend& target_model) {
    try {
        std::mt19937_64 rng(seed);
        const auto n_vocab = static_cast<std::size_t>(draft_model.model().hparams().n_vocab);
        std::vector<int> fed, text;  // what the draft's cache holds; the text to continue
        std::vector<float> logits;
        Batch batch;
        for (;;) {
            std::uint64_t epoch = 0;
            {
                std::unique_lock<std::mutex> lock(s.mutex);
                const auto room = [&] {
                    return s.proposals.size() < s.ahead && s.committed.size() + s.proposals.size() < s.text_limit;
                };
                if (!s.stop && !room()) {
                    // Nothing to draft until the target commits: lend this
                    // thread to its verify meanwhile, if it keeps a place for
                    // one; else (or once that has lasted spin_for) wait.
                    const std::uint64_t seen = s.version.load();
                    lock.unlock();
                    const auto start = Clock::now();
                    target_model.help([&] { return s.version.load() != seen || Clock::now() - start > spin_for; });
                    lock.lock();
                    s.wait(lock, [&] { return s.stop || room(); });
                }
                if (s.stop) return;
                text = s.committed;
                for (const Proposal& p : s.proposals) text.push_back(p.token);
                epoch = s.epoch;
            }
            // Keep the cache's K/V for the prefix it shares with the text; the
            // last token is always read (again), for its logits.
            const std::size_t keep = std::min(common_prefix(fed, text), text.size() - 1);
            kv.truncate(seq, static_cast<int>(keep));
            batch.clear();
            for (std::size_t pos = keep; pos < text.size(); ++pos)
                batch.add(text[pos], static_cast<int>(pos), seq, pos + 1 == text.size());
            const auto t0 = Clock::now();
            draft_model.forward(kv, batch, logits);
            fed = text;
            Proposal p;
            sampler_distribution(std::span<const float>(logits).first(n_vocab), sampling, p.q);
            p.token = sample_from(p.q, rng);
            const double ms = ms_since(t0);

            std::unique_lock<std::mutex> lock(s.mutex);
            ++s.n_draft_passes;
            s.draft_ms += ms;
            if (s.epoch == epoch) {  // else the text it continued was rejected meanwhile
                s.proposals.push_back(std::move(p));
                s.changed();
            }
        }
    } catch (...) {
        std::unique_lock<std::mutex> lock(s.mutex);
        s.draft_error = std::current_exception();
        s.changed();
    }
}

}  // namespace

void SpeculativeDecoder::generate_overlapped(Run& run, int n_ctx) {
    const SpeculativeParams& params = run.params;
    std::span<const int> prompt = run.r.prompt_tokens;
    const int d_seq = draft_kv_->add_sequence();

    Shared s;
    s.committed.assign(prompt.begin(), prompt.end());
    // Twice k and the bonus position: after a step that took k proposals and
    // matched the next, k more are already waiting.
    s.ahead = 2 * static_cast<std::size_t>(params.n_draft) + 2;
    s.text_limit = std::min(prompt.size() + static_cast<std::size_t>(params.n_predict), static_cast<std::size_t>(n_ctx));
    std::thread draft_thread(draft_ahead, std::ref(s), std::ref(draft_), std::ref(*draft_kv_), d_seq,
                             std::cref(params.sampling), params.sampling.seed ^ 0x9e3779b97f4a7c15ULL,
                             std::ref(target_));
    // However this function leaves (an error, a cancel), the draft stops first.
    struct Joiner {
        Shared& s;
        std::thread& t;
        ~Joiner() {
            {
                std::lock_guard<std::mutex> lock(s.mutex);
                s.stop = true;
                s.changed();
            }
            t.join();
        }
    } joiner{s, draft_thread};

    SpeculativeStats& st = run.r.stats;
    st.overlapped = true;

    while (run.r.stop_reason == StopReason::none) {
        SpeculativeStep step;
        const int remaining = params.n_predict - st.n_generated;
        const int k = std::min(params.n_draft, remaining - 1);

        // 1. take k proposals (fewer only where the text must end first). The
        // first step takes what is there: the target reads the prompt while
        // the draft does.
        auto t0 = Clock::now();
        {
            std::unique_lock<std::mutex> lock(s.mutex);
            if (k > 0 && st.n_steps > 0)
                s.wait(lock, [&] {
                    return static_cast<int>(s.proposals.size()) >= k ||
                           s.committed.size() + s.proposals.size() >= s.text_limit || s.draft_error;
                });
            if (s.draft_error) std::rethrow_exception(s.draft_error);
            const int m = std::min<int>(k, static_cast<int>(s.proposals.size()));
            if (q_.size() < static_cast<std::size_t>(m)) q_.resize(static_cast<std::size_t>(m));
            for (int i = 0; i < m; ++i) {
                step.drafted.push_back(s.proposals[static_cast<std::size_t>(i)].token);
                q_[static_cast<std::size_t>(i)] = s.proposals[static_cast<std::size_t>(i)].q;
            }
        }
        const int m = static_cast<int>(step.drafted.size());
        step.n_drafted = m;
        step.wait_ms = ms_since(t0);

        // 2. verify, 3. accept or reject: as when taking turns.
        verify(step, run);
        const int next = accept(step, run);

        // 4. commit: the draft keeps its guesses only where they continue the
        // committed text (finish_step rolls the target's cache back).
        {
            std::lock_guard<std::mutex> lock(s.mutex);
            for (int i = 0; i < step.n_accepted; ++i) {
                s.committed.push_back(s.proposals.front().token);
                s.proposals.pop_front();
            }
            s.committed.push_back(next);
            if (!s.proposals.empty() && s.proposals.front().token == next) {
                s.proposals.pop_front();
            } else {
                s.proposals.clear();
                ++s.epoch;
            }
            s.changed();
        }

        finish_step(std::move(step), next, run);
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    st.n_draft_passes = s.n_draft_passes;
    st.draft_ms = s.draft_ms;
}

}  // namespace sixstep::serving
