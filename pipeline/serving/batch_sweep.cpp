#include "pipeline/serving/batch_sweep.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <unistd.h>

#include <fmt/format.h>

#include "pipeline/core/cpu_wait.h"
#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"

namespace sixstep::serving {

namespace {

using Clock = std::chrono::steady_clock;

double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

// The context a decode run asks for, against the model's.
void check_decode_context(const char* what, const llm::LlamaHparams& hp, int n_context, int n_steps) {
    if (n_context < 1) throw Error(fmt::format("{}: the context must hold at least 1 token, not {}", what, n_context));
    if (n_steps < 1) throw Error(fmt::format("{}: at least 1 decode step is needed, not {}", what, n_steps));
    const long long n_ctx = static_cast<long long>(n_context) + n_steps;
    if (n_ctx > hp.n_ctx)
        throw Error(fmt::format("{}: a context of {} tokens plus {} decode steps needs {} positions, more than "
                                "the model's context of {} (n_ctx)",
                                what, n_context, n_steps, n_ctx, hp.n_ctx));
}

// n_seq sequences of n_context random tokens in one KV cache with room for
// n_steps more positions each; steps that add one token to each of the
// first B sequences, and a reset that cuts them back to n_context.
class DecodeRig {
public:
    // what: how errors name the caller ("batch sweep").
    DecodeRig(const char* what, llm::Backend& backend, int n_seq, int n_context, int n_steps, std::uint64_t seed)
        : backend_(backend), n_context_(n_context), rng_(seed) {
        const llm::LlamaHparams& hp = backend.model().hparams();
        check_decode_context(what, hp, n_context, n_steps);
        const int n_ctx = n_context + n_steps;
        // The pool is allocated block by block as it fills; refuse up front
        // what could never fit rather than fail half-way through a sweep.
        const llm::KvCacheParams kp = llm::kv_cache_params(hp, n_ctx, n_seq);
        const double per_pos = static_cast<double>(decode_shape(backend.model()).kv_bytes_per_token);
        const double blocks = (n_ctx + kp.block_size - 1) / kp.block_size;
        const double need = static_cast<double>(n_seq) * blocks * kp.block_size * per_pos;
        const double have = physical_memory_bytes();
        if (have > 0 && need > 0.5 * have)
            throw Error(fmt::format("{}: {} sequences × {} positions need {} of KV cache ({:.0f} KiB per position), "
                                    "more than half of this machine's {} of memory: use smaller batches or a "
                                    "shorter context",
                                    what, n_seq, n_ctx, gib(need), per_pos / 1024, gib(have)));
        kv_ = backend.make_kv_cache(n_ctx, n_seq);
        for (int s = 0; s < n_seq; ++s) seqs_.push_back(kv_->add_sequence());
    }

    // Fills every sequence with n_context random tokens, several sequences
    // per forward pass (about 512 tokens each), untimed.
    void prefill(const std::function<void(int done, int total)>& progress) {
        constexpr int chunk = 512;
        const int n_vocab = backend_.model().hparams().n_vocab;
        std::uniform_int_distribution<int> any(0, n_vocab - 1);
        llm::Batch b;
        int done = 0;
        for (std::size_t i = 0; i < seqs_.size(); ++i) {
            for (int p = 0; p < n_context_; ++p) {
                b.add(any(rng_), p, seqs_[i], p == n_context_ - 1);
                if (b.size() >= chunk) {
                    backend_.forward(*kv_, b, logits_);
                    b.clear();
                }
            }
            if (progress) progress(++done, static_cast<int>(seqs_.size()));
        }
        if (b.size() > 0) backend_.forward(*kv_, b, logits_);
    }

    // One decode step over the first n sequences: its forward pass in ms,
    // less the time this thread waited for a CPU meanwhile (the OS ran
    // another program: a busy machine's pause, not the step's cost), and
    // that wait.
    WorkTimer::Split step(int n) {
        const int n_vocab = backend_.model().hparams().n_vocab;
        std::uniform_int_distribution<int> any(0, n_vocab - 1);
        batch_.clear();
        for (int i = 0; i < n; ++i) batch_.add(any(rng_), kv_->n_tokens(seqs_[i]), seqs_[i], true);
        const WorkTimer t;
        backend_.forward(*kv_, batch_, logits_);
        return t.split();
    }

    // Cuts the first n sequences back to their prefilled context.
    void reset(int n) {
        for (int i = 0; i < n; ++i) kv_->truncate(seqs_[i], n_context_);
    }

private:
    llm::Backend& backend_;
    int n_context_;
    std::mt19937_64 rng_;
    std::unique_ptr<llm::KvCache> kv_;
    std::vector<int> seqs_;
    llm::Batch batch_;
    std::vector<float> logits_;
};

}  // namespace

double kv_to_weights_at_largest(const BatchSweepResult& r) {
    if (r.points.empty() || r.shape.weight_bytes == 0) return 0;
    return r.points.back().cost.kv_bytes / static_cast<double>(r.shape.weight_bytes);
}

void check_batch_sweep_params(const llm::Backend& backend, const BatchSweepParams& p) {
    if (p.batch_sizes.empty()) throw Error("batch sweep: no batch sizes given");
    std::vector<int> sizes = p.batch_sizes;
    std::sort(sizes.begin(), sizes.end());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 1 || sizes[i] > 4096)
            throw Error(fmt::format("batch sweep: batch size {} is out of range (1 … 4096)", sizes[i]));
        if (i > 0 && sizes[i] == sizes[i - 1])
            throw Error(fmt::format("batch sweep: batch size {} is given twice", sizes[i]));
    }
    if (p.n_steps > 4096) throw Error(fmt::format("batch sweep: {} decode steps is too many (at most 4096)", p.n_steps));
    if (p.repetitions < 1 || p.repetitions > 100)
        throw Error(fmt::format("batch sweep: repetitions must be 1 … 100, not {}", p.repetitions));
    check_decode_context("batch sweep", backend.model().hparams(), p.n_context, p.n_steps);
}

BatchSweepResult run_batch_sweep(llm::Backend& backend, const BatchSweepParams& p) {
    const auto t_start = Clock::now();
    check_batch_sweep_params(backend, p);
    std::vector<int> sizes = p.batch_sizes;
    std::sort(sizes.begin(), sizes.end());

    BatchSweepResult r;
    r.backend = backend.name();
    r.n_context = p.n_context;
    r.n_steps = p.n_steps;
    r.repetitions = p.repetitions;
    // Step j of a run attends to n_context + j + 1 positions (j = 0 … n_steps−1).
    r.mean_context = p.n_context + (p.n_steps + 1) / 2.0;
    r.shape = decode_shape(backend.model());
    r.roofs = p.roofs;
    if (p.roofs) r.ridge_batch = ridge_batch(r.shape, r.mean_context, *p.roofs);

    DecodeRig rig("batch sweep", backend, sizes.back(), p.n_context, p.n_steps, p.seed);
    const auto report = [&](const std::string& stage, int done, int total) {
        // The front end's progress line too, and a place where Ctrl+C stops the sweep.
        report_progress("batch sweep: " + stage, static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(total));
        if (p.progress) p.progress({stage, done, total});
    };
    const auto t_prefill = Clock::now();
    rig.prefill([&](int done, int total) { report("prefill", done, total); });
    r.prefill_s = std::chrono::duration<double>(Clock::now() - t_prefill).count();

    // The runs go in rounds: each round times every batch size once. Run
    // one size's repetitions back to back and a load that comes and goes
    // on the machine (a browser, a build, another lesson) lands on some
    // sizes and not others, bending the curve where nothing in the model
    // bends it; in rounds each size's median meets the same moments.
    r.points.resize(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        r.points[i].n_batch = sizes[i];
        r.points[i].run_step_ms.reserve(static_cast<std::size_t>(p.repetitions));
    }
    const int n_runs = p.repetitions * static_cast<int>(sizes.size());
    for (int rep = 0; rep < p.repetitions; ++rep) {
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            const int b = sizes[i];
            report(fmt::format("round {} of {}, batch {}", rep + 1, p.repetitions, b),
                   rep * static_cast<int>(sizes.size()) + static_cast<int>(i), n_runs);
            rig.step(b);  // warm-up: scratch buffers sized, caches warm for this size
            rig.reset(b);
            double total = 0;
            for (int s = 0; s < p.n_steps; ++s) {
                throw_if_cancelled();  // a run of large batches on a big model takes minutes
                const WorkTimer::Split t = rig.step(b);
                total += t.ms;
                r.cpu_wait_ms += t.waited_ms;
            }
            rig.reset(b);
            r.points[i].run_step_ms.push_back(total / p.n_steps);
        }
    }
    report("done", n_runs, n_runs);
    for (BatchSweepPoint& pt : r.points) {
        pt.step_ms = median(pt.run_step_ms);
        pt.tokens_per_s = pt.n_batch * 1000.0 / pt.step_ms;
        pt.cost = decode_step_cost(r.shape, pt.n_batch, r.mean_context);
        if (p.roofs) pt.roofline = predict_roofline(pt.cost, *p.roofs);
    }
    for (BatchSweepPoint& pt : r.points) {
        pt.speedup = pt.tokens_per_s / r.points.front().tokens_per_s;
        pt.tpot_ratio = pt.step_ms / r.points.front().step_ms;
    }
    std::vector<double> xs, ys;
    for (const BatchSweepPoint& pt : r.points) xs.push_back(pt.n_batch), ys.push_back(pt.tokens_per_s);
    r.knee = find_knee(xs, ys, p.knee);
    r.knee_method = knee_method(p.knee);
    r.sweep_s = std::chrono::duration<double>(Clock::now() - t_start).count();
    return r;
}

std::vector<double> measure_decode_steps(llm::Backend& backend, int n_seq, int n_context, int n_steps,
                                         std::uint64_t seed) {
    if (n_seq < 1 || n_seq > 4096)
        throw Error(fmt::format("decode steps: batch size {} is out of range (1 … 4096)", n_seq));
    if (n_steps < 1 || n_steps > 100000)
        throw Error(fmt::format("decode steps: {} steps is out of range (1 … 100000)", n_steps));
    DecodeRig rig("decode steps", backend, n_seq, n_context, n_steps + 1, seed);
    rig.prefill({});
    rig.step(n_seq);  // warm-up
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(n_steps));
    for (int s = 0; s < n_steps; ++s) {
        report_progress("timing decode steps", static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(n_steps));
        ms.push_back(rig.step(n_seq).ms);
    }
    return ms;
}

}  // namespace sixstep::serving
