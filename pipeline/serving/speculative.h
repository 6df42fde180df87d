// Speculative decoding: a small draft model guesses the next k tokens, the
// target model checks all of them in ONE batched forward pass, and every
// guess it agrees with is a token gained without a pass of its own.
//
// One step, with the sequence x[0..n-1] so far:
//   1. draft   the draft model proposes d1..dk, one cheap pass each
//              (d_i drawn from q_i, the draft's sampler distribution);
//   2. verify  the target reads x[n-1], d1..dk in one batch and returns
//              logits for all k+1 rows → p_1..p_{k+1} (the target's sampler
//              distribution after each prefix);
//   3. accept  for i = 1..k: keep d_i with probability min(1, p_i(d_i)/q_i(d_i));
//              at the first rejection draw a replacement from
//              normalize(max(0, p_i − q_i)) and stop; if all k survive, draw a
//              bonus token from p_{k+1};
//   4. roll back both KV caches to the accepted length (KvCache::truncate).
// Each step emits between 1 and k+1 tokens for one target pass. The rule in 3
// makes every emitted token distributed exactly as the target's sampler
// would draw it (Leviathan et al. 2023, Chen et al. 2023); at temperature 0
// both distributions are one-hot, so it reduces to "keep the draft's token
// while it equals the target's argmax" and the text is the target's own,
// token for token.
//
// Where it loses: every rejected guess cost a draft pass and a verify row
// for nothing. A draft that disagrees (acceptance near 0) pays k draft passes
// for one token; high temperature flattens p and q apart; a large k drafts
// tokens that a rejection early in the step throws away. sweep_speculative()
// measures those regimes instead of claiming them.
//
//     auto target = make_backend(BackendKind::cpu, LlamaModel::load("big.gguf"), {.n_threads = 2}).backend;
//     auto draft  = make_backend(BackendKind::cpu, LlamaModel::load("draft.gguf"), {.n_threads = 1}).backend;
//     SpeculativeDecoder dec(*target, *draft);      // throws when the vocabularies differ
//     SpeculativeParams p;  p.n_draft = 4;  p.n_predict = 64;  p.sampling.temperature = 0;
//     SpeculativeResult r = dec.generate(*codec, codec->encode("Once upon a time"), p);
//     r.stats.acceptance_rate(), r.stats.tokens_per_pass()
//
// Overlapped (SpeculativeParams::overlap): instead of taking turns, the draft
// runs ahead on a thread of its own, proposing while the target verifies;
// the target takes k proposals per pass. The rule is the same; a rejection
// throws the draft's guesses beyond it away. When the draft is far enough
// ahead it lends its thread to the target's pass in flight (Backend::help:
// build the target with BackendParams::n_helpers = 1), so both cores work
// on the verify once the drafting is done. Taking turns, the drafting — a
// third of a step — stood on the target's critical path with the second
// core idle; overlapped it mostly does not. Greedy text is still the
// target's own; sampled text follows its distribution but is not repeatable
// draw for draw (when each token is drawn depends on the threads' timing).
// A request asked to overlap takes turns instead when the machine has no
// CPU free for the draft's thread (SpeculativeStats::overlap_declined says
// so): the target would wait for a thread the OS has taken off its core.
// See speculative_overlap.cpp.
//
// Clocks are wall time around the engine's own work (no tokenizing): the
// draft's passes, the target's passes, and the accept/reject arithmetic.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/cpu/cpu_load.h"
#include "pipeline/llm/generation.h"
#include "pipeline/llm/sampler.h"
#include "pipeline/llm/stop_reason.h"
#include "pipeline/llm/text_codec.h"

namespace sixstep::serving {

// More draft tokens than this per step is never useful (acceptance^k of a
// good draft is already tiny) and is refused as a mistake.
inline constexpr int max_draft_tokens = 64;

struct SpeculativeParams {
    int n_draft = 4;               // k: tokens the draft proposes per step, 1..max_draft_tokens
    int n_predict = 64;            // most tokens to generate, >= 1
    llm::SamplerParams sampling;   // the target's chain (the draft proposes through the same chain); seed drives every draw
    bool stop_at_eog = true;       // stop at the end-of-generation token
    bool overlap = false;          // the draft runs ahead on a thread of its own (see above)
};

// One target pass.
struct SpeculativeStep {
    int n_drafted = 0;         // tokens the draft proposed (k, or fewer near n_predict or the context's end)
    int n_accepted = 0;        // of those, accepted by the target
    bool all_accepted = false; // every proposal survived: the extra token is a bonus from the last row
    int n_verify_rows = 0;     // rows in the target's batch (the prompt is in the first step's)
    std::vector<int> drafted;  // the proposals
    std::vector<int> emitted;  // tokens this step adds to the text (accepted + correction or bonus; cut at a stop)
    double draft_ms = 0;       // the draft's passes (overlapped: 0, they run on the draft's thread)
    double wait_ms = 0;        // overlapped: the target waiting for a proposal (0 when taking turns)
    double verify_ms = 0;      // the target's pass
    double accept_ms = 0;      // distributions, accept/reject, draws
};

struct SpeculativeStats {
    bool overlapped = false;   // the draft ran on a thread of its own
    std::string overlap_declined;  // overlap was asked for, but no CPU was free for the draft's thread: why
    int n_steps = 0;           // target passes
    int n_draft_passes = 0;    // draft passes (overlapped: including those whose proposals were thrown away)
    int n_drafted = 0;         // Σ drafted
    int n_accepted = 0;        // Σ accepted
    int n_generated = 0;       // tokens emitted
    double draft_ms = 0, wait_ms = 0, verify_ms = 0, accept_ms = 0;  // overlapped: draft_ms on the draft's thread
    double total_ms = 0;       // the whole generation, prompt included
    double ttft_ms = 0;        // to the end of the first step (its tokens are the first out)
    // accepted ÷ drafted
    double acceptance_rate() const { return n_drafted > 0 ? static_cast<double>(n_accepted) / n_drafted : 0; }
    // tokens emitted per target pass (= 1 + mean accepted, unless a stop cut the last step)
    double tokens_per_pass() const { return n_steps > 0 ? static_cast<double>(n_generated) / n_steps : 0; }
};

struct SpeculativeResult {
    std::vector<int> prompt_tokens;
    std::vector<int> tokens;           // generated ids
    std::string text;                  // generated text
    llm::StopReason stop_reason = llm::StopReason::none;  // eos, max_tokens or cancelled once done
    std::vector<SpeculativeStep> steps;
    SpeculativeStats stats;
};

// Step 3 for one proposal: x was drawn from q; keep it with probability
// min(1, p(x)/q(x)), else draw the correction from normalize(max(0, p − q)).
// Whatever q is, the returned token is distributed as p. p and q are
// n_vocab probabilities (sampler_distribution); uses rng only when needed.
struct Verdict {
    bool accepted = false;
    int token = 0;  // x when accepted, else the correction
};
Verdict accept_or_correct(std::span<const float> p, std::span<const float> q, int x, std::mt19937_64& rng,
                          std::vector<float>& scratch);

// Throws sixstep::Error unless the draft's vocabulary is the target's, token
// for token: "the draft's vocabulary has 512 tokens but the target's has
// 2000: speculative decoding needs the same tokenizer" — or, with equal
// sizes, which token differs.
void check_same_vocabulary(const llm::LlamaModel& target, const llm::LlamaModel& draft);

class SpeculativeDecoder {
public:
    // Checks the vocabularies (check_same_vocabulary).
    SpeculativeDecoder(llm::Backend& target, llm::Backend& draft);

    // Streams each step's emitted tokens; return false to stop (stop_reason "cancelled").
    using OnStep = std::function<bool(const SpeculativeStep&, const std::string& new_text)>;
    // Throws sixstep::Error for bad parameters, an empty prompt, or a request
    // that does not fit either model's context.
    SpeculativeResult generate(const llm::TextCodec& codec, std::span<const int> prompt, const SpeculativeParams& params,
                               const OnStep& on_step = {});

    // Where an overlapped request learns whether a CPU is free for the
    // draft's thread: the machine's runnable tasks (cpu_load.h; nullopt: not
    // known, so overlap). Tests set their own.
    void set_runnable_source(llm::RunnableSource source) { runnable_source_ = std::move(source); }

private:
    // One request in progress: what both ways of stepping it share.
    struct Run {
        const llm::TextCodec& codec;
        const SpeculativeParams& params;
        const OnStep& on_step;
        SpeculativeResult r;
        std::vector<int> all;   // prompt + generated
        int t_seq = 0;          // the target's sequence in its cache
        int t_past = 0;         // positions the target's cache holds
        std::mt19937_64 rng;    // the target's draws (taking turns: the draft's too)
        std::unique_ptr<llm::TokenTextStream> stream;
        std::chrono::steady_clock::time_point t_start;
    };
    void generate_in_turns(Run& run);
    void generate_overlapped(Run& run, int n_ctx);
    // "" when a CPU is free for the draft's thread; else why not.
    std::string no_cpu_for_draft_thread() const;
    // 2. the target reads run.all[run.t_past..] and step.drafted in one pass (logits_).
    void verify(SpeculativeStep& step, const Run& run);
    // 3. the rule over step.drafted (distributions q_); returns the token
    // that follows the accepted ones: the correction or the bonus.
    int accept(SpeculativeStep& step, Run& run);
    // 4. the target's cache keeps the accepted prefix; then emits the
    // accepted proposals and `next`, stopping where the target alone would,
    // adds the step to the statistics and streams it (on_step).
    void finish_step(SpeculativeStep step, int next, Run& run);

    llm::Backend& target_;
    llm::Backend& draft_;
    llm::RunnableSource runnable_source_;
    std::unique_ptr<llm::KvCache> target_kv_, draft_kv_;
    llm::Batch batch_;
    std::vector<float> logits_;
    std::vector<std::vector<float>> q_;  // the draft's distributions of this step, [k][n_vocab]
    std::vector<float> p_, scratch_;
};

// The target alone, for comparison: the same prompt and parameters through
// the stepper (the code path `sixstep generate` uses). kv: a cache of the
// target's to reuse (cleared of this request afterwards), or null for a new one.
llm::GenerateResult generate_target_alone(llm::Backend& target, const llm::TextCodec& codec, std::span<const int> prompt,
                                          const SpeculativeParams& params, llm::KvCache* kv = nullptr);

// Speculative decoding beside the target alone on the same request.
struct SpeculativeComparison {
    SpeculativeResult speculative;  // the median timed run (by time per token)
    llm::GenerateResult target;     // the target alone (its text, for greedy, must equal speculative's)
    double target_ms = 0;           // the target alone, whole generation (median of its timed runs)
    double speculative_ms = 0;      // `speculative`'s whole generation
    // Per generated token, so runs that stop at different lengths compare:
    // (target_ms ÷ its tokens) ÷ (speculative_ms ÷ its tokens). Above 1 speculative wins.
    double speedup = 0;
    bool identical = false;         // the same token ids (expected when greedy)
    // Asked to overlap: the timed speculative runs that took turns instead,
    // and the last one's reason. Each run looks for a free CPU again, so on
    // a machine whose load comes and goes some runs may overlap and some not.
    int n_timed = 0;
    int n_declined = 0;
    std::string overlap_declined;
    // Each round's own speedup, per generated token: the target alone (the
    // median of its runs, as in `speedup`) ÷ that round's speculative run
    // (round_spread). `speedup` is the median of them.
    std::vector<double> round_speedups;
};

// Every k in `ks` (params.n_draft is ignored) against one target alone,
// timed in rounds: each round runs the target alone and then one k, for
// every k in turn, `repetitions` >= 1 rounds. The target alone's median over
// all its runs is every k's baseline; each k keeps its median run. One
// comparison per k, in the order of `ks`.
// alone: the backend the target alone runs on, when it is not `target` —
// overlapped, the target gets the cores the draft leaves it, and the target
// alone all of them (the same model; another thread count).
std::vector<SpeculativeComparison> compare_speculative(llm::Backend& target, llm::Backend& draft,
                                                       const llm::TextCodec& codec, std::span<const int> prompt,
                                                       const SpeculativeParams& params, std::span<const int> ks,
                                                       int repetitions, llm::Backend* alone = nullptr);
// The same for params.n_draft alone.
SpeculativeComparison compare_speculative(llm::Backend& target, llm::Backend& draft, const llm::TextCodec& codec,
                                          std::span<const int> prompt, const SpeculativeParams& params,
                                          int repetitions = 3, llm::Backend* alone = nullptr);

// The regimes, measured: every (draft, k, temperature) with its acceptance,
// tokens per pass and speedup.
struct SpeculativeDraft {
    std::string name;        // "stories-draft-f16.gguf", "random weights"
    llm::Backend* backend = nullptr;
};
struct SweepParams {
    std::vector<int> ks = {1, 2, 4, 8};           // draft lengths
    std::vector<float> temperatures = {0, 1};     // 0 is greedy
    SpeculativeParams base;                       // everything else (n_predict, seed, filters)
    int repetitions = 3;                          // timed rounds (compare_speculative), medians kept
    llm::Backend* alone = nullptr;                // the target alone's backend (null: the target's; see compare_speculative)
};
inline constexpr std::size_t max_sweep_temperatures = 16;  // a sweep's temperatures; its ks are 1 .. max_draft_tokens, each once

// A speedup this close to 1× is called even at least: timing noise tips it
// either way.
inline constexpr double even_band = 0.05;

// How far a setting's timed rounds spread: the middle half of their
// speedups, low to high (of 9 rounds the 3rd to the 7th, of 5 the 2nd to
// the 4th; the slowest and fastest quarter left out, the spells when another
// program took the core). A speedup is called about the same as the target
// alone when it is within even_band of 1×, or when those rounds fall on both
// sides of 1×: two reruns on a busy machine called one setting a win
// (1.04×) and a loss (0.97×), where its own rounds said it could be either.
struct RoundSpread {
    double low = 0, high = 0;
    bool straddles_one() const { return low <= 1 && high >= 1; }
};
RoundSpread round_spread(std::vector<double> round_speedups);
// |speedup − 1| < even_band, or rounds.straddles_one().
bool about_the_same(double speedup, const RoundSpread& rounds);

struct SweepRow {
    std::string draft;
    int k = 0;
    float temperature = 0;
    double acceptance = 0;        // accepted ÷ drafted
    double tokens_per_pass = 0;
    // Per generated token, µs to the tenth as printed: the median run's wall
    // time split by its clocks, so the parts add up to the total and the two
    // totals divide to the speedup.
    double target_token_us = 0;       // the target alone (its median run)
    double draft_token_us = 0;        // taking turns: the draft's passes (overlapped: 0, on a thread of its own)
    double wait_token_us = 0;         // overlapped: the target waiting for proposals
    double verify_token_us = 0;       // the target's passes
    double accept_token_us = 0;       // distributions, accept/reject, draws
    double other_token_us = 0;        // the rest of the run (caches, text)
    double speculative_token_us = 0;  // Σ the five above
    double target_tok_s = 0;          // 10⁶ ÷ target_token_us
    double speculative_tok_s = 0;     // 10⁶ ÷ speculative_token_us
    double speedup = 0;               // target_token_us ÷ speculative_token_us, to two decimals as printed
    // One verify pass (k + 1 rows) ÷ the target alone's time per token: near
    // 1 where a pass waits on memory, near k + 1 where it is arithmetic.
    double verify_pass_cost = 0;
    bool identical = false;           // greedy rows: the same text as the target alone
    RoundSpread rounds;               // the spread of its timed rounds' speedups (round_spread)
    bool even = false;                // about_the_same(speedup, rounds)
    // "wins", "about the same" (about_the_same: within even_band of 1×, or
    // rounds either side of it) or "loses" (and why, when the draft
    // disagrees), then the costs behind the speedup.
    std::string verdict;
    // Asked to overlap, it took turns in n_declined of its n_timed timed
    // runs (SpeculativeComparison): the last one's reason, or empty.
    std::string overlap_declined;
    int n_declined = 0;
    int n_timed = 0;
};

// What timed runs say of their overlap: "" when every one overlapped (or
// none was asked to), the reason when every one took turns, else
// "2 of 3 timed runs: " and the last one's reason.
std::string took_turns_note(int n_declined, int n_timed, const std::string& reason);
inline std::string took_turns_note(const SweepRow& row) {
    return took_turns_note(row.n_declined, row.n_timed, row.overlap_declined);
}
inline std::string took_turns_note(const SpeculativeComparison& c) {
    return took_turns_note(c.n_declined, c.n_timed, c.overlap_declined);
}
std::vector<SweepRow> sweep_speculative(llm::Backend& target, std::span<const SpeculativeDraft> drafts,
                                        const llm::TextCodec& codec, std::span<const int> prompt,
                                        const SweepParams& params);

nlohmann::ordered_json speculative_json(const SpeculativeResult& r, const llm::TextCodec& codec);
nlohmann::ordered_json comparison_json(const SpeculativeComparison& c, const llm::TextCodec& codec);
nlohmann::ordered_json sweep_json(std::span<const SweepRow> rows);

}  // namespace sixstep::serving
