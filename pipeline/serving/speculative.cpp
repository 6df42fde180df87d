#include "pipeline/serving/speculative.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/sampler_dist.h"
#include "pipeline/llm/stepper.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::serving {

using namespace sixstep::llm;

namespace {

using Clock = std::chrono::steady_clock;

void check_params(const SpeculativeParams& p) {
    if (p.n_draft < 1 || p.n_draft > max_draft_tokens)
        throw Error(fmt::format("draft length k = {}: give 1..{} tokens per step", p.n_draft, max_draft_tokens));
    if (p.n_predict < 1) throw Error(fmt::format("n = {}: ask for at least one token", p.n_predict));
}

}  // namespace

Verdict accept_or_correct(std::span<const float> p, std::span<const float> q, int x, std::mt19937_64& rng,
                          std::vector<float>& scratch) {
    const float px = p[static_cast<std::size_t>(x)], qx = q[static_cast<std::size_t>(x)];
    // p(x) >= q(x) accepts for sure (no draw); qx > 0 since x was drawn from q.
    if (px >= qx || std::uniform_real_distribution<double>(0.0, 1.0)(rng) < static_cast<double>(px) / qx)
        return {true, x};
    scratch.resize(p.size());
    double mass = 0;
    for (std::size_t j = 0; j < p.size(); ++j) mass += scratch[j] = std::max(0.0f, p[j] - q[j]);
    // p(x) < q(x) leaves mass elsewhere (Σ(p−q)⁺ = Σ(q−p)⁺ > 0); only rounding could empty it.
    return {false, sample_from(mass > 0 ? std::span<const float>(scratch) : p, rng)};
}

void check_same_vocabulary(const LlamaModel& target, const LlamaModel& draft) {
    const int nt = target.hparams().n_vocab, nd = draft.hparams().n_vocab;
    if (nt != nd)
        throw Error(fmt::format("the draft's vocabulary has {} tokens but the target's has {}: speculative decoding "
                                "needs the same tokenizer (draft {}, target {})",
                                nd, nt, draft.file().name(), target.file().name()));
    // Equal sizes are not enough: the ids must mean the same text.
    const Vocab vt = Vocab::from_gguf(target.file());
    const Vocab vd = Vocab::from_gguf(draft.file());
    for (int id = 0; id < nt; ++id)
        if (vt.token_text(id) != vd.token_text(id))
            throw Error(fmt::format("the draft's and the target's vocabularies both have {} tokens but differ at id {}: "
                                    "draft {}, target {} (speculative decoding needs the same tokenizer)",
                                    nt, id, quote_text(vd.token_text(id)), quote_text(vt.token_text(id))));
    if (vt.eos() != vd.eos() || vt.bos() != vd.bos())
        throw Error(fmt::format("the draft's special tokens differ from the target's (BOS {} vs {}, EOS {} vs {})",
                                vd.bos(), vt.bos(), vd.eos(), vt.eos()));
}

SpeculativeDecoder::SpeculativeDecoder(Backend& target, Backend& draft)
    : target_(target), draft_(draft), runnable_source_(runnable_tasks_that_compete) {
    check_same_vocabulary(target.model(), draft.model());
}

// Overlapped, the target waits for the draft's thread at every step; with no
// CPU free for it, the OS runs it only when it takes a CPU from someone, a
// slice of milliseconds later, against passes of tens of microseconds (the
// bundled pair on 2 CPUs beside one spinning process: 0.07–0.11× the target
// alone, where taking turns loses little). So a request asked to overlap
// looks first, as the thread pool does (cpu_load.h), and takes turns when
// crowded_readings a fifth of a millisecond apart all find no CPU free.
std::string SpeculativeDecoder::no_cpu_for_draft_thread() const {
    const int online = online_cpus();
    int fewest_others = 0;
    for (int i = 0; i < crowded_readings; ++i) {
        if (i > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
        const std::optional<int> runnable = runnable_source_ ? runnable_source_() : std::nullopt;
        // Ours: this thread alone (the draft's is not started yet).
        if (!runnable || cpu_free_for_another(*runnable, 1, online)) return "";
        const int others = std::max(0, *runnable - 1);
        fewest_others = i == 0 ? others : std::min(fewest_others, others);
    }
    return fmt::format("no CPU free for the draft's thread ({} other runnable task{} on {} CPU{}): it took turns",
                       fewest_others, fewest_others == 1 ? "" : "s", online, online == 1 ? "" : "s");
}

SpeculativeResult SpeculativeDecoder::generate(const TextCodec& codec, std::span<const int> prompt,
                                               const SpeculativeParams& params, const OnStep& on_step) {
    check_params(params);
    const int n_vocab = target_.model().hparams().n_vocab;
    const int n_ctx = std::min(target_.model().hparams().n_ctx, draft_.model().hparams().n_ctx);
    check_generation_fits(static_cast<int>(prompt.size()), params.n_predict, n_ctx);
    for (int id : prompt)
        if (id < 0 || id >= n_vocab)
            throw Error(fmt::format("prompt token id {} does not exist: the vocabulary has ids 0..{}", id, n_vocab - 1));
    // Bad sampler parameters fail here, before any pass.
    std::vector<float> probe(1, 0.0f);
    sampler_distribution(probe, params.sampling, p_);

    for (auto [backend, kv] : {std::pair{&target_, &target_kv_}, std::pair{&draft_, &draft_kv_}}) {
        if (!*kv || (*kv)->params().n_ctx != n_ctx) *kv = backend->make_kv_cache(n_ctx);
        (*kv)->clear();
    }
    // Before the clock starts: the look costs up to 0.4 ms.
    std::string overlap_declined = params.overlap ? no_cpu_for_draft_thread() : "";
    Run run{codec, params, on_step, {}, {prompt.begin(), prompt.end()}, target_kv_->add_sequence(), 0,
            std::mt19937_64(params.sampling.seed), codec.stream(), Clock::now()};
    run.r.prompt_tokens = run.all;
    run.r.stats.overlap_declined = std::move(overlap_declined);
    if (params.overlap && run.r.stats.overlap_declined.empty())
        generate_overlapped(run, n_ctx);
    else
        generate_in_turns(run);
    run.r.stats.total_ms = ms_since(run.t_start);
    return std::move(run.r);
}

void SpeculativeDecoder::generate_in_turns(Run& run) {
    const SpeculativeParams& params = run.params;
    const int d_seq = draft_kv_->add_sequence();
    const auto q_row = static_cast<std::size_t>(draft_.model().hparams().n_vocab);
    int d_past = 0;  // positions the draft's cache holds
    SpeculativeStats& st = run.r.stats;

    while (run.r.stop_reason == StopReason::none) {
        SpeculativeStep step;
        const int n = static_cast<int>(run.all.size());
        const int remaining = params.n_predict - st.n_generated;
        // Never draft past n_predict: a step emits at most k + 1 tokens.
        const int k = std::min(params.n_draft, remaining - 1);

        // 1. draft: the first pass reads whatever the draft has not seen yet
        // (the prompt, or the last step's tokens), then one proposal at a time.
        auto t0 = Clock::now();
        if (q_.size() < static_cast<std::size_t>(k)) q_.resize(static_cast<std::size_t>(k));
        for (int i = 0; i < k; ++i) {
            batch_.clear();
            if (i == 0)
                for (int pos = d_past; pos < n; ++pos) batch_.add(run.all[pos], pos, d_seq, pos == n - 1);
            else
                batch_.add(step.drafted.back(), n - 1 + i, d_seq, true);
            draft_.forward(*draft_kv_, batch_, logits_);
            sampler_distribution(std::span<const float>(logits_).first(q_row), params.sampling, q_[i]);
            step.drafted.push_back(sample_from(q_[i], run.rng));
            ++st.n_draft_passes;
        }
        const int d_held = k > 0 ? n + k - 1 : d_past;
        step.n_drafted = k;
        step.draft_ms = ms_since(t0);

        // 2. verify: the target reads its unseen tokens and the k proposals in
        // one pass, with logits for the last k + 1 rows; 3. accept or reject.
        verify(step, run);
        const int next = accept(step, run);

        // 4. roll back: both caches keep the prefix that is now the text.
        d_past = std::min(d_held, n + step.n_accepted);
        draft_kv_->truncate(d_seq, d_past);
        finish_step(std::move(step), next, run);
    }
}

void SpeculativeDecoder::verify(SpeculativeStep& step, const Run& run) {
    const auto t0 = Clock::now();
    const int n = static_cast<int>(run.all.size());
    batch_.clear();
    for (int pos = run.t_past; pos < n; ++pos) batch_.add(run.all[pos], pos, run.t_seq, pos == n - 1);
    for (int i = 0; i < step.n_drafted; ++i) batch_.add(step.drafted[i], n + i, run.t_seq, true);
    step.n_verify_rows = batch_.size();
    target_.forward(*target_kv_, batch_, logits_);
    step.verify_ms = ms_since(t0);
}

int SpeculativeDecoder::accept(SpeculativeStep& step, Run& run) {
    const auto t0 = Clock::now();
    const SamplerParams& sampling = run.params.sampling;
    std::mt19937_64& rng = run.rng;
    const int n_vocab = target_.model().hparams().n_vocab;
    const auto vocab_row = [&](int row) {
        return std::span<const float>(logits_).subspan(static_cast<std::size_t>(row) * n_vocab, n_vocab);
    };
    // Left to right, up to the first rejection.
    int next = -1;
    for (int i = 0; i < step.n_drafted && next < 0; ++i) {
        sampler_distribution(vocab_row(i), sampling, p_);
        const Verdict v = accept_or_correct(p_, q_[static_cast<std::size_t>(i)], step.drafted[i], rng, scratch_);
        if (v.accepted)
            ++step.n_accepted;
        else
            next = v.token;
    }
    if (next < 0) {
        step.all_accepted = true;
        sampler_distribution(vocab_row(step.n_drafted), sampling, p_);
        next = sample_from(p_, rng);
    }
    step.accept_ms = ms_since(t0);
    return next;
}

void SpeculativeDecoder::finish_step(SpeculativeStep step, int next, Run& run) {
    const int kept = static_cast<int>(run.all.size()) + step.n_accepted;  // positions 0..kept-1: accepted tokens
    target_kv_->truncate(run.t_seq, kept);
    run.t_past = kept;

    // Emit, stopping where the target alone would have stopped.
    SpeculativeResult& r = run.r;
    SpeculativeStats& st = r.stats;
    const TextCodec& codec = run.codec;
    const SpeculativeParams& params = run.params;
    TokenTextStream& stream = *run.stream;
    std::vector<int>& all = run.all;
    std::vector<int> out(step.drafted.begin(), step.drafted.begin() + step.n_accepted);
    out.push_back(next);
    std::string new_text;
    for (int tok : out) {
        step.emitted.push_back(tok);
        r.tokens.push_back(tok);
        all.push_back(tok);
        ++st.n_generated;
        if (params.stop_at_eog && codec.is_eog(tok)) {
            r.stop_reason = StopReason::eos;
            break;
        }
        new_text += stream.push(tok);
        if (st.n_generated >= params.n_predict) {
            r.stop_reason = StopReason::max_tokens;
            break;
        }
    }
    if (r.stop_reason != StopReason::none) new_text += stream.flush();
    r.text += new_text;

    ++st.n_steps;
    st.n_drafted += step.n_drafted;
    st.n_accepted += step.n_accepted;
    st.draft_ms += step.draft_ms;
    st.wait_ms += step.wait_ms;
    st.verify_ms += step.verify_ms;
    st.accept_ms += step.accept_ms;
    if (st.n_steps == 1) st.ttft_ms = ms_since(run.t_start);
    r.steps.push_back(std::move(step));
    if (run.on_step && !run.on_step(r.steps.back(), new_text) && r.stop_reason == StopReason::none) {
        r.stop_reason = StopReason::cancelled;
        r.text += stream.flush();
    }
}

GenerateResult generate_target_alone(Backend& target, const TextCodec& codec, std::span<const int> prompt,
                                     const SpeculativeParams& params, KvCache* kv) {
    check_params(params);
    std::unique_ptr<KvCache> own;
    if (!kv) {
        own = target.make_kv_cache();
        kv = own.get();
    }
    GenerateParams gp;
    gp.n_predict = params.n_predict;
    gp.sampling = params.sampling;
    gp.stop_at_eog = params.stop_at_eog;
    Generation g(codec, std::vector<int>(prompt.begin(), prompt.end()), gp);
    Stepper stepper(target, *kv);
    stepper.attach(g);
    while (!g.done()) {
        stepper.forward_all();
        g.sample();
    }
    return g.result();
}

std::vector<SpeculativeComparison> compare_speculative(Backend& target, Backend& draft, const TextCodec& codec,
                                                       std::span<const int> prompt, const SpeculativeParams& params,
                                                       std::span<const int> ks, int repetitions, Backend* alone) {
    if (repetitions < 1) throw Error(fmt::format("repetitions = {}: run at least once", repetitions));
    if (ks.empty()) throw Error("speculative comparison: give at least one draft length k");
    std::vector<SpeculativeParams> ps(ks.size(), params);
    for (std::size_t i = 0; i < ks.size(); ++i) {
        ps[i].n_draft = ks[i];
        check_params(ps[i]);
    }
    SpeculativeDecoder dec(target, draft);
    Backend& base = alone ? *alone : target;
    const auto kv = base.make_kv_cache();
    std::vector<SpeculativeComparison> out(ks.size());
    // One untimed run of each first: page faults and cold caches are the
    // cold-start lesson's business, not this one's.
    for (std::size_t i = 0; i < ks.size(); ++i) out[i].speculative = dec.generate(codec, prompt, ps[i]);
    GenerateResult target_result = generate_target_alone(base, codec, prompt, params, kv.get());
    // Rounds: in each, every k runs once, each right after a run of the
    // target alone. On a shared machine the speed of both drifts by ±20 %
    // within a second (a laptop's clock, other programs); interleaved, every
    // setting and the target alone meet the same spells, and the target
    // alone is timed once per speculative run, so its median is the steadiest
    // figure of all. (Timed in pairs per k instead, lesson 13's four
    // baselines on a busy 2-core machine read 4,648 to 8,352 tok/s within
    // one run of the lesson.)
    struct Timed {
        double ms = 0;
        SpeculativeResult r;
    };
    std::vector<std::vector<Timed>> runs(ks.size());
    std::vector<double> target_ms;
    for (int round = 0; round < repetitions; ++round)
        for (std::size_t i = 0; i < ks.size(); ++i) {
            auto t0 = Clock::now();
            target_result = generate_target_alone(base, codec, prompt, params, kv.get());
            target_ms.push_back(ms_since(t0));
            t0 = Clock::now();
            SpeculativeResult r = dec.generate(codec, prompt, ps[i]);
            runs[i].push_back({ms_since(t0), std::move(r)});
        }
    const double alone_ms = median(target_ms);
    const double alone_token_ms = alone_ms / static_cast<double>(std::max<std::size_t>(1, target_result.tokens.size()));
    for (std::size_t i = 0; i < ks.size(); ++i) {
        SpeculativeComparison& c = out[i];
        for (const Timed& t : runs[i]) {
            ++c.n_timed;
            if (!t.r.stats.overlap_declined.empty()) ++c.n_declined, c.overlap_declined = t.r.stats.overlap_declined;
        }
        // The median run itself (the lower one of an even count), not a
        // median of times: its statistics then explain its time.
        const auto per_token = [](const Timed& t) {
            return t.ms / static_cast<double>(std::max<std::size_t>(1, t.r.tokens.size()));
        };
        // Each round's speedup against the same steady baseline, so the
        // headline (the median run's) is one of them and lies within their
        // middle half. Paired with the run of the target alone just before
        // it instead, a busy machine's rounds read 0.41–1.27× beside a
        // headline of 1.54×.
        for (const Timed& t : runs[i])
            if (per_token(t) > 0) c.round_speedups.push_back(alone_token_ms / per_token(t));
        std::vector<Timed>& v = runs[i];
        const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
        std::nth_element(v.begin(), mid, v.end(),
                         [&](const Timed& a, const Timed& b) { return per_token(a) < per_token(b); });
        c.speculative_ms = mid->ms;
        c.speedup = per_token(*mid) > 0 ? alone_token_ms / per_token(*mid) : 0;
        c.speculative = std::move(mid->r);
        c.target = target_result;
        c.target_ms = alone_ms;
        c.identical = c.target.tokens == c.speculative.tokens;
    }
    return out;
}

SpeculativeComparison compare_speculative(Backend& target, Backend& draft, const TextCodec& codec,
                                          std::span<const int> prompt, const SpeculativeParams& params,
                                          int repetitions, Backend* alone) {
    const int k = params.n_draft;
    return std::move(compare_speculative(target, draft, codec, prompt, params, std::span(&k, 1), repetitions, alone)
                         .front());
}

RoundSpread round_spread(std::vector<double> round_speedups) {
    RoundSpread s;
    if (round_speedups.empty()) return s;
    std::sort(round_speedups.begin(), round_speedups.end());
    const std::size_t n = round_speedups.size(), cut = n / 4;
    s.low = round_speedups[cut];
    s.high = round_speedups[n - 1 - cut];
    return s;
}

bool about_the_same(double speedup, const RoundSpread& rounds) {
    return std::abs(speedup - 1) < even_band || rounds.straddles_one();
}

namespace {

// To the tenth of a microsecond a row prints: its parts then add up to its
// total, and the two totals divide to its speedup.
double tenth(double us) { return std::round(us * 10) / 10; }

SweepRow sweep_row(const std::string& draft, int k, float temperature, const SpeculativeComparison& c) {
    const SpeculativeStats& s = c.speculative.stats;
    SweepRow row;
    row.draft = draft;
    row.k = k;
    row.temperature = temperature;
    row.acceptance = s.acceptance_rate();
    row.tokens_per_pass = s.tokens_per_pass();
    row.identical = c.identical;
    row.overlap_declined = c.overlap_declined;
    row.n_declined = c.n_declined;
    row.n_timed = c.n_timed;
    // The median run's wall time per token, split where its clocks split it.
    const double per_token_us = 1000.0 / std::max(1, s.n_generated);
    const double draft_ms = s.overlapped ? 0 : s.draft_ms;  // overlapped, the draft ran on a thread of its own
    row.draft_token_us = tenth(draft_ms * per_token_us);
    row.wait_token_us = tenth(s.wait_ms * per_token_us);
    row.verify_token_us = tenth(s.verify_ms * per_token_us);
    row.accept_token_us = tenth(s.accept_ms * per_token_us);
    row.other_token_us =
        tenth(std::max(0.0, c.speculative_ms - draft_ms - s.wait_ms - s.verify_ms - s.accept_ms) * per_token_us);
    row.speculative_token_us =
        row.draft_token_us + row.wait_token_us + row.verify_token_us + row.accept_token_us + row.other_token_us;
    row.target_token_us = tenth(1000.0 * c.target_ms / static_cast<double>(std::max<std::size_t>(1, c.target.tokens.size())));
    row.target_tok_s = row.target_token_us > 0 ? 1e6 / row.target_token_us : 0;
    row.speculative_tok_s = row.speculative_token_us > 0 ? 1e6 / row.speculative_token_us : 0;
    row.verify_pass_cost =
        row.target_token_us > 0 ? row.verify_token_us * row.tokens_per_pass / row.target_token_us : 0;
    // Rounded as printed, so the verdict is the one the printed figure gives.
    row.speedup = row.speculative_token_us > 0 ? std::round(100 * row.target_token_us / row.speculative_token_us) / 100 : 0;
    // A full verify pass: k + 1 rows, or fewer where the answer's end cut
    // every step's guesses short (a run of 3 tokens at k = 64 checks 3, not 65).
    int rows = 1;
    for (const SpeculativeStep& step : c.speculative.steps) rows = std::max(rows, step.n_drafted + 1);
    const std::string costs =
        // Then what checking k guesses costs: one pass of k + 1 rows, in the
        // target's own tokens (lesson 13: near 1 only where a pass waits on memory).
        s.overlapped ? fmt::format("a token costs a wait for the draft {:.1f} + verify {:.1f} + accept {:.1f} + other "
                                   "{:.1f} = {:.1f} µs, the target alone {:.1f} µs; a verify pass of {} rows took {:.1f}× "
                                   "a token of the target alone",
                                   row.wait_token_us, row.verify_token_us, row.accept_token_us, row.other_token_us,
                                   row.speculative_token_us, row.target_token_us, rows, row.verify_pass_cost)
                     : fmt::format("a token costs draft {:.1f} + verify {:.1f} + accept {:.1f} + other {:.1f} = {:.1f} "
                                   "µs, the target alone {:.1f} µs; a verify pass of {} rows took {:.1f}× a token of the "
                                   "target alone",
                                   row.draft_token_us, row.verify_token_us, row.accept_token_us, row.other_token_us,
                                   row.speculative_token_us, row.target_token_us, rows, row.verify_pass_cost);

    // Within 5 %, or where its own rounds fell on both sides of 1×, a rerun
    // on a busy machine can tip the verdict either way: call it the same,
    // not won or lost.
    row.rounds = round_spread(c.round_speedups);
    row.even = about_the_same(row.speedup, row.rounds);
    if (row.even && row.rounds.straddles_one())
        row.verdict = fmt::format("about the same: its middle timed rounds ran {:.2f}–{:.2f}×, either side of 1×: {}",
                                  row.rounds.low, row.rounds.high, costs);
    else if (row.even)
        row.verdict = fmt::format("about the same: within {:.0f}% of 1× (its middle timed rounds ran {:.2f}–{:.2f}×): {}",
                                  100 * even_band, row.rounds.low, row.rounds.high, costs);
    else if (row.speedup >= 1)
        row.verdict = fmt::format("wins: {}", costs);
    else if (row.acceptance < 0.5)
        row.verdict = fmt::format("loses: the draft disagrees ({:.0f}% accepted), and {}", 100 * row.acceptance, costs);
    else
        row.verdict = fmt::format("loses: {}", costs);
    return row;
}

}  // namespace

std::vector<SweepRow> sweep_speculative(Backend& target, std::span<const SpeculativeDraft> drafts,
                                        const TextCodec& codec, std::span<const int> prompt,
                                        const SweepParams& params) {
    if (drafts.empty()) throw Error("speculative sweep: give at least one draft model");
    if (params.ks.empty() || params.temperatures.empty())
        throw Error("speculative sweep: give at least one k and one temperature");
    for (int k : params.ks) {
        SpeculativeParams p = params.base;
        p.n_draft = k;
        check_params(p);
    }
    for (float t : params.temperatures)
        if (!std::isfinite(t) || t < 0)
            throw Error(fmt::format("speculative sweep: temperature {} is not a finite number >= 0", t));
    // Each setting is several timed runs: a repeated one only costs time, and
    // a list of thousands runs for hours.
    const auto once_each = [](auto values, const char* what) {
        std::sort(values.begin(), values.end());
        if (const auto twice = std::adjacent_find(values.begin(), values.end()); twice != values.end())
            throw Error(fmt::format("speculative sweep: {} {} is given twice", what, *twice));
    };
    once_each(params.ks, "draft length");
    once_each(params.temperatures, "temperature");
    if (params.temperatures.size() > max_sweep_temperatures)
        throw Error(fmt::format("speculative sweep: {} temperatures; at most {}", params.temperatures.size(),
                                max_sweep_temperatures));
    std::vector<SweepRow> rows;
    const std::uint64_t n_rows = drafts.size() * params.temperatures.size() * params.ks.size();
    for (const SpeculativeDraft& d : drafts) {
        if (!d.backend) throw Error("speculative sweep: a draft has no backend");
        for (float temp : params.temperatures) {
            report_progress("speculative sweep (settings)", rows.size(), n_rows);
            // Every k of one draft and temperature against one target alone,
            // timed in the same rounds (compare_speculative).
            SpeculativeParams p = params.base;
            p.sampling.temperature = temp;
            const std::vector<SpeculativeComparison> cs =
                compare_speculative(target, *d.backend, codec, prompt, p, params.ks, params.repetitions, params.alone);
            for (std::size_t i = 0; i < cs.size(); ++i) rows.push_back(sweep_row(d.name, params.ks[i], temp, cs[i]));
        }
    }
    return rows;
}

nlohmann::ordered_json speculative_json(const SpeculativeResult& r, const TextCodec& codec) {
    const SpeculativeStats& s = r.stats;
    nlohmann::ordered_json j;
    j["text"] = r.text;
    j["stop_reason"] = llm::stop_reason_name(r.stop_reason);
    j["prompt_tokens"] = r.prompt_tokens;
    j["tokens"] = r.tokens;
    j["stats"] = {{"overlapped", s.overlapped},
                  {"overlap_declined", s.overlap_declined},
                  {"n_steps", s.n_steps},
                  {"n_draft_passes", s.n_draft_passes},
                  {"n_drafted", s.n_drafted},
                  {"n_accepted", s.n_accepted},
                  {"n_generated", s.n_generated},
                  {"acceptance_rate", s.acceptance_rate()},
                  {"tokens_per_pass", s.tokens_per_pass()},
                  {"draft_ms", s.draft_ms},
                  {"wait_ms", s.wait_ms},
                  {"verify_ms", s.verify_ms},
                  {"accept_ms", s.accept_ms},
                  {"ttft_ms", s.ttft_ms},
                  {"total_ms", s.total_ms}};
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const SpeculativeStep& st : r.steps) {
        nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
        for (int t : st.emitted) pieces.push_back(codec.piece(t));
        steps.push_back({{"n_drafted", st.n_drafted},
                         {"n_accepted", st.n_accepted},
                         {"all_accepted", st.all_accepted},
                         {"n_verify_rows", st.n_verify_rows},
                         {"drafted", st.drafted},
                         {"emitted", st.emitted},
                         {"pieces", pieces},
                         {"draft_ms", st.draft_ms},
                         {"wait_ms", st.wait_ms},
                         {"verify_ms", st.verify_ms},
                         {"accept_ms", st.accept_ms}});
    }
    j["steps"] = steps;
    return j;
}

nlohmann::ordered_json comparison_json(const SpeculativeComparison& c, const TextCodec& codec) {
    nlohmann::ordered_json j;
    j["speculative"] = speculative_json(c.speculative, codec);
    j["target_alone"] = {{"text", c.target.text},
                         {"tokens", c.target.tokens},
                         {"stop_reason", llm::stop_reason_name(c.target.stop_reason)},
                         {"ms", c.target_ms},
                         {"tok_s", c.target_ms > 0 ? 1000.0 * c.target.tokens.size() / c.target_ms : 0}};
    j["speculative_ms"] = c.speculative_ms;
    j["speculative_tok_s"] = c.speculative_ms > 0 ? 1000.0 * c.speculative.tokens.size() / c.speculative_ms : 0;
    j["speedup"] = c.speedup;
    j["identical_to_target"] = c.identical;
    j["timed_runs_declined"] = c.n_declined;  // asked to overlap, these took turns (the reason: speculative.stats)
    j["timed_runs"] = c.n_timed;
    return j;
}

std::string took_turns_note(int n_declined, int n_timed, const std::string& reason) {
    if (n_declined == 0) return "";
    if (n_declined == n_timed) return reason;
    return fmt::format("{} of {} timed runs: {}", n_declined, n_timed, reason);
}

nlohmann::ordered_json sweep_json(std::span<const SweepRow> rows) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const SweepRow& r : rows)
        j.push_back({{"draft", r.draft},
                     {"k", r.k},
                     {"temperature", r.temperature},
                     {"acceptance", r.acceptance},
                     {"tokens_per_pass", r.tokens_per_pass},
                     {"target_tok_s", r.target_tok_s},
                     {"speculative_tok_s", r.speculative_tok_s},
                     {"speedup", r.speedup},
                     {"target_token_us", r.target_token_us},
                     {"speculative_token_us", r.speculative_token_us},
                     {"draft_token_us", r.draft_token_us},
                     {"wait_token_us", r.wait_token_us},
                     {"verify_token_us", r.verify_token_us},
                     {"accept_token_us", r.accept_token_us},
                     {"other_token_us", r.other_token_us},
                     {"identical", r.identical},
                     {"rounds_low", r.rounds.low},
                     {"rounds_high", r.rounds.high},
                     {"verdict", r.verdict},
                     {"overlap_declined", r.overlap_declined},
                     {"timed_runs_declined", r.n_declined},
                     {"timed_runs", r.n_timed}});
    return j;
}

}  // namespace sixstep::serving
