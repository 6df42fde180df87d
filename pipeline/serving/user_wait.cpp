#include "pipeline/serving/user_wait.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "pipeline/core/cpu_wait.h"
#include "pipeline/core/text.h"
#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/llm/generator.h"
#include "pipeline/llm/stepper.h"

namespace sixstep::serving {

using namespace sixstep::llm;

namespace {

using Clock = std::chrono::steady_clock;

void require_range(const char* what, int v, int lo, int hi) {
    if (v < lo || v > hi) throw Error(fmt::format("{} = {}: give {}..{}", what, v, lo, hi));
}
void require_positive_finite(const char* what, double v, double max) {
    if (!std::isfinite(v) || v <= 0 || v > max)
        throw Error(fmt::format("{} = {}: give a finite number above 0 and at most {}", what, v, max));
}

void check_params(const UserWaitParams& p) {
    require_range("chat tokens", p.chat_tokens, 1, 4096);
    require_range("agent calls", p.agent_calls, 1, 100);
    require_range("agent tokens", p.agent_tokens, 1, 4096);
    require_range("batch requests", p.batch_requests, 1, 256);
    require_range("batch tokens", p.batch_tokens, 1, 4096);
    if (!(p.reading_words_per_min >= min_reading_wpm && p.reading_words_per_min <= max_reading_wpm))
        throw Error(fmt::format("reading speed (words/min) = {}: give {:g}..{:g}", p.reading_words_per_min,
                                min_reading_wpm, max_reading_wpm));
    require_positive_finite("fast output (tokens/s)", p.fast_tok_s, 1e6);
    require_positive_finite("instantaneous limit (ms)", p.instant_ms, 1e7);
    require_positive_finite("flow limit (ms)", p.flow_ms, 1e7);
    if (p.chat_prompt.empty() || p.agent_prompt.empty()) throw Error("the chat and agent prompts must not be empty");
}

// At most `bytes` of text, cut before a UTF-8 continuation byte, never
// inside a character.
std::string utf8_prefix(const std::string& text, std::size_t bytes) {
    if (text.size() <= bytes) return text;
    while (bytes > 0 && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) --bytes;
    return text.substr(0, bytes);
}

int count_words(const std::string& text) {
    int n = 0;
    bool in_word = false;
    for (unsigned char c : text) {
        const bool space = std::isspace(c) != 0;
        if (!space && !in_word) ++n;
        in_word = !space;
    }
    return n;
}

std::string ms_text(double ms) { return ms < 1 ? fmt::format("{:.3f} ms", ms) : ms < 100 ? fmt::format("{:.1f} ms", ms) : fmt::format("{:.0f} ms", ms); }

constexpr int warm_up_tokens = 4;  // the untimed request before the chat
// Each agent call runs this many times (greedy: the same answer each time)
// and keeps its fastest TTFT and its fastest total: the engine's own time.
// A call is a few milliseconds, and a shared machine takes its CPU away
// now and then for a host tick (4 ms on an AMD Zen 5 VM, in one 1-ms
// window in six): one such pause in one first token turned "the first
// tokens are a small part of the wait" round in a lesson's check, and
// medians of three still kept a pause in one call in three.
constexpr int agent_runs = 3;

// The batch job, both ways, is timed this many times, and each way's fastest
// run counts: a job of a few milliseconds against another, each timed once,
// let one pause on a busy machine decide which was faster (batched over
// sequential came out 1.2–2.7× in five runs beside a build).
constexpr int batch_runs = 3;

// The batch job's openings.
constexpr const char* batch_prompts[] = {"Once upon a time", "The cat sat on the", "One day, a little girl",
                                         "The dog ran to the",  "In a small village", "Tom and Lily went to the",
                                         "The sun was",         "A big red ball"};

// Reading speed is quoted in words; a tokenizer splits a word into one or
// more tokens. Counted on the streamed text when it reads like prose; a
// random-weight model's output has hardly any spaces (dozens of tokens per
// "word"), so then on this English passage, through the same tokenizer.
constexpr const char* reference_prose =
    "One day, a little girl named Lily found a needle in her room. She knew it was difficult to play with it "
    "because it was sharp. Lily wanted to share the needle with her mom, so she could sew a button on her shirt.";
constexpr int min_words_for_rate = 8;
constexpr double max_plausible_tokens_per_word = 8;

ChatWait chat(Generator& gen, const TextCodec& codec, const UserWaitParams& p) {
    ChatWait c;
    GenerateParams gp;
    gp.n_predict = p.chat_tokens;
    gp.sampling.temperature = 0;
    gp.stop_at_eog = false;  // the reader gets chat_tokens tokens
    const GenerateResult r = gen.generate(p.chat_prompt, gp, [&](const TokenEvent& e) {
        c.arrival_ms.push_back(e.t_ms);
        return true;
    });
    c.text = r.text;
    c.ttft_ms = r.timings.ttft_ms;
    c.tpot_ms = r.timings.tpot_ms;
    c.decode_tok_s = r.timings.decode_tok_s();
    c.n_tokens = r.timings.n_generated;
    c.n_words = std::max(1, count_words(r.text));
    c.tokens_per_word = static_cast<double>(c.n_tokens) / c.n_words;
    c.tokens_per_word_source = "this text";
    if (c.n_words < min_words_for_rate || c.tokens_per_word > max_plausible_tokens_per_word) {
        c.tokens_per_word = static_cast<double>(codec.encode(reference_prose).size()) / count_words(reference_prose);
        c.tokens_per_word_source = "English prose: the streamed text does not read like words";
    }
    c.reading_tok_s = p.reading_words_per_min / 60.0 * c.tokens_per_word;
    c.stream_over_reading = c.decode_tok_s / c.reading_tok_s;
    c.stream_over_fast = c.decode_tok_s / p.fast_tok_s;

    const ReaderTimeline reader = read_along(c.arrival_ms, c.reading_tok_s);
    c.read_ms = reader.read_ms;
    c.reader_waited_ms = reader.waited_ms;
    c.reader_done_ms = reader.done_ms;
    // The same measured timeline with decode twice as fast, or TTFT halved.
    std::vector<double> faster = c.arrival_ms, earlier = c.arrival_ms;
    const double first = c.arrival_ms.front();
    for (double& a : faster) a = first + (a - first) / 2;
    for (double& a : earlier) a -= first / 2;
    c.done_if_decode_2x_ms = read_along(faster, c.reading_tok_s).done_ms;
    c.done_if_ttft_half_ms = read_along(earlier, c.reading_tok_s).done_ms;

    c.headline.metric = "TTFT";
    c.headline.value = c.ttft_ms;
    c.headline.unit = "ms";
    c.headline.verdict = c.ttft_ms < p.instant_ms ? fmt::format("under Nielsen's {}: the answer feels instantaneous", ms_text(p.instant_ms))
                         : c.ttft_ms < p.flow_ms  ? fmt::format("under Nielsen's {}: the flow of thought is kept, but the wait is felt", ms_text(p.flow_ms))
                                                  : fmt::format("over Nielsen's {}: the user's flow of thought breaks", ms_text(p.flow_ms));
    c.findings.push_back(fmt::format("reading speed: {:g} words/min × {:.2f} tokens per word (measured on {}) = "
                                     "{:.1f} tokens/s",
                                     p.reading_words_per_min, c.tokens_per_word, c.tokens_per_word_source,
                                     c.reading_tok_s));
    if (c.n_tokens < 2 || c.decode_tok_s <= 0)
        c.findings.push_back("one token answered: there is no decode speed (no time per output token) to compare "
                             "with reading");
    else if (c.decode_tok_s < c.reading_tok_s)
        c.findings.push_back(fmt::format("decode {:.1f} tokens/s is slower than reading ({:.1f} tokens/s): the reader "
                                         "waits for text, TPOT matters here",
                                         c.decode_tok_s, c.reading_tok_s));
    else if (c.decode_tok_s >= p.fast_tok_s)
        c.findings.push_back(fmt::format("decode {:.0f} tokens/s is {:.0f}× reading speed and {:.0f}× {:g} tokens/s: "
                                         "the text outruns every reader, a faster decode changes nothing they notice",
                                         c.decode_tok_s, c.stream_over_reading, c.stream_over_fast, p.fast_tok_s));
    else
        c.findings.push_back(fmt::format("decode {:.1f} tokens/s keeps ahead of reading ({:.1f}×) but is under {:g} "
                                         "tokens/s: a fast reader skimming may catch up",
                                         c.decode_tok_s, c.stream_over_reading, p.fast_tok_s));
    c.findings.push_back(fmt::format("a reader at that speed finishes after {} (waiting {} for text on the way); had "
                                     "decode been twice as fast: {} ({} sooner); had TTFT been half: {} ({} sooner)",
                                     ms_text(c.reader_done_ms), ms_text(c.reader_waited_ms),
                                     ms_text(c.done_if_decode_2x_ms), ms_text(c.reader_done_ms - c.done_if_decode_2x_ms),
                                     ms_text(c.done_if_ttft_half_ms), ms_text(c.reader_done_ms - c.done_if_ttft_half_ms)));
    return c;
}

AgentWait agent(Generator& gen, const UserWaitParams& p) {
    AgentWait a;
    GenerateParams gp;
    gp.n_predict = p.agent_tokens;
    gp.sampling.temperature = 0;
    std::string prompt = p.agent_prompt;
    for (int i = 0; i < p.agent_calls; ++i) {
        report_progress("agent: calls", static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(p.agent_calls));
        std::vector<double> ttft, total;
        GenerateResult r;
        for (int run = 0; run < agent_runs; ++run) {
            r = gen.generate(prompt, gp);
            ttft.push_back(r.timings.ttft_ms);
            total.push_back(r.timings.total_ms);
        }
        AgentCall call;
        call.prompt = prompt;
        call.output = r.text;
        call.n_prompt = r.timings.n_prompt;
        call.n_generated = r.timings.n_generated;
        call.ttft_ms = *std::min_element(ttft.begin(), ttft.end());  // within the fastest total: each run's is within its own
        call.total_ms = *std::min_element(total.begin(), total.end());
        a.calls.push_back(call);
        a.end_to_end_ms += call.total_ms;
        a.ttft_sum_ms += call.ttft_ms;
        a.saved_if_ttft_half_ms += call.ttft_ms / 2;
        a.saved_if_tpot_half_ms += (call.total_ms - call.ttft_ms) / 2;
        // The next call reads this answer (cut to a bounded length); an empty
        // answer repeats the question.
        const bool blank = count_words(r.text) == 0;
        if (!blank) prompt = utf8_prefix(r.text, static_cast<std::size_t>(agent_reread_bytes_per_token) * p.agent_tokens);
    }
    a.ttft_share = a.end_to_end_ms > 0 ? a.ttft_sum_ms / a.end_to_end_ms : 0;
    a.headline.metric = "end-to-end";
    a.headline.value = a.end_to_end_ms;
    a.headline.unit = "ms";
    a.headline.verdict =
        p.agent_calls == 1
            ? fmt::format("the agent waited for one complete answer; its first token was {:.0f}% of it", 100 * a.ttft_share)
            : fmt::format("the agent waited for {} complete answers in a row; their first tokens were {:.0f}% of it",
                          p.agent_calls, 100 * a.ttft_share);
    a.findings.push_back(fmt::format("halving TTFT would save {} ({:.0f}% of the chain); halving TPOT would save {} "
                                     "({:.0f}%)",
                                     ms_text(a.saved_if_ttft_half_ms), 100 * a.saved_if_ttft_half_ms / a.end_to_end_ms,
                                     ms_text(a.saved_if_tpot_half_ms), 100 * a.saved_if_tpot_half_ms / a.end_to_end_ms));
    a.findings.push_back("nobody reads the stream: a first token early is worth nothing until the last one arrives");
    return a;
}

// One run of the batch job, one way: its wall time, the mean time from its
// start to a request's end, the tokens made and (batched) the forward
// passes taken.
struct JobRun {
    double ms = 0, mean_done_ms = 0;
    int n_tokens = 0, n_forward = 0;
};

// Different openings for the batch job's requests, each its own seed.
const char* batch_prompt(int i) { return batch_prompts[static_cast<std::size_t>(i) % std::size(batch_prompts)]; }
GenerateParams batch_params(const UserWaitParams& p, int i) {
    GenerateParams gp;
    gp.n_predict = p.batch_tokens;
    gp.stop_at_eog = false;  // every request the same length, both ways
    gp.sampling.seed = p.seed + static_cast<std::uint64_t>(i);
    return gp;
}

// The batch job's two ways are timed less the waits for a CPU (WorkTimer,
// cpu_wait.h): a gain of a quarter or so, on a busy machine, was otherwise
// decided by which way the OS set aside for another program more often.

// One request after another.
JobRun job_one_at_a_time(Generator& gen, const UserWaitParams& p) {
    JobRun j;
    const WorkTimer t;
    double done_sum = 0;
    for (int i = 0; i < p.batch_requests; ++i) {
        report_progress("batch job: requests one at a time", static_cast<std::uint64_t>(i),
                        static_cast<std::uint64_t>(p.batch_requests));
        const GenerateResult r = gen.generate(batch_prompt(i), batch_params(p, i));
        j.n_tokens += r.timings.n_generated;
        done_sum += t.ms();
    }
    j.ms = t.ms();
    j.mean_done_ms = done_sum / p.batch_requests;
    return j;
}

// All at once: the stepper puts every request's next token in one pass.
JobRun job_batched(Backend& backend, const TextCodec& codec, const UserWaitParams& p) {
    JobRun j;
    const auto kv = backend.make_kv_cache(0, p.batch_requests);
    std::vector<std::unique_ptr<Generation>> gens;
    for (int i = 0; i < p.batch_requests; ++i) gens.push_back(std::make_unique<Generation>(codec, batch_prompt(i), batch_params(p, i)));
    double done_sum = 0;
    int n_done = 0;
    const WorkTimer t;
    {
        Stepper stepper(backend, *kv);
        for (auto& g : gens) stepper.attach(*g);
        while (n_done < p.batch_requests) {
            report_progress("batch job: requests all at once", static_cast<std::uint64_t>(n_done),
                            static_cast<std::uint64_t>(p.batch_requests));
            stepper.forward_all();
            ++j.n_forward;
            for (auto& g : gens)
                if (g->has_logits()) {
                    g->sample();
                    ++j.n_tokens;
                    if (g->done()) ++n_done, done_sum += t.ms();
                }
        }
    }
    j.ms = t.ms();
    j.mean_done_ms = done_sum / p.batch_requests;
    return j;
}

BatchWait batch(Backend& backend, Generator& gen, const TextCodec& codec, const UserWaitParams& p) {
    BatchWait b;
    b.n_requests = p.batch_requests;
    JobRun one, all;  // each way's fastest run
    one.ms = all.ms = std::numeric_limits<double>::infinity();
    for (int run = 0; run < batch_runs; ++run) {
        const JobRun a = job_one_at_a_time(gen, p), c = job_batched(backend, codec, p);
        if (c.n_tokens != a.n_tokens)
            throw Error(fmt::format("batch job: {} tokens batched but {} one at a time", c.n_tokens, a.n_tokens));
        if (a.ms < one.ms) one = a;
        if (c.ms < all.ms) all = c;
    }
    b.n_tokens = one.n_tokens;
    b.sequential_ms = one.ms;
    b.sequential_mean_done_ms = one.mean_done_ms;
    b.batched_ms = all.ms;
    b.batched_mean_done_ms = all.mean_done_ms;
    b.n_forward_batched = all.n_forward;
    b.sequential_tok_s = 1000.0 * b.n_tokens / b.sequential_ms;
    b.batched_tok_s = 1000.0 * b.n_tokens / b.batched_ms;
    b.gain = b.batched_tok_s / b.sequential_tok_s;

    b.headline.metric = "throughput";
    b.headline.value = b.batched_tok_s;
    b.headline.unit = "tokens/s";
    b.headline.verdict = fmt::format("{} × {} batched: {:.2f}× the throughput of one at a time ({:.0f} tokens/s)",
                                     count_of(static_cast<std::size_t>(p.batch_requests), "request", "requests"),
                                     count_of(static_cast<std::size_t>(p.batch_tokens), "token", "tokens"), b.gain,
                                     b.sequential_tok_s);
    b.findings.push_back(fmt::format(fmt::runtime(b.n_forward_batched == 1
                                                      ? "the job took {} batched ({} forward pass) against {} one at a time"
                                                      : "the job took {} batched ({} forward passes) against {} one at a time"),
                                     ms_text(b.batched_ms), b.n_forward_batched, ms_text(b.sequential_ms)));
    b.findings.push_back(fmt::format("mean time from the job's start to a request's end: {} batched, {} one at a time "
                                     "— no one waits on a single request, so only the total counts",
                                     ms_text(b.batched_mean_done_ms), ms_text(b.sequential_mean_done_ms)));
    return b;
}

}  // namespace

ReaderTimeline read_along(const std::vector<double>& arrival_ms, double tok_s) {
    if (!(tok_s > 0)) throw Error(fmt::format("reading speed {} tokens/s must be above 0", tok_s));
    ReaderTimeline r;
    const double per_token = 1000.0 / tok_s;
    double free_at = 0;  // when the reader is ready for the next token
    for (std::size_t i = 0; i < arrival_ms.size(); ++i) {
        const double a = arrival_ms[i];
        if (i > 0 && a > free_at) r.waited_ms += a - free_at;
        free_at = std::max(a, free_at) + per_token;
        r.read_ms.push_back(free_at);
    }
    r.done_ms = free_at;
    return r;
}

long long user_waits_positions_at_most(const UserWaitParams& p) {
    using llm::encoded_tokens_at_most;
    const long long chat_prompt = encoded_tokens_at_most(p.chat_prompt);
    const long long agent_prompt = encoded_tokens_at_most(p.agent_prompt);
    const long long reread = static_cast<long long>(agent_reread_bytes_per_token) * p.agent_tokens + 2;
    long long batch_prompt = 0;
    for (const char* s : batch_prompts) batch_prompt = std::max(batch_prompt, encoded_tokens_at_most(s));
    const long long chat = (chat_prompt + warm_up_tokens) + (chat_prompt + p.chat_tokens);
    const long long agent = agent_runs * ((agent_prompt + p.agent_tokens) +
                                          (p.agent_calls - 1LL) * (std::max(reread, agent_prompt) + p.agent_tokens));
    const long long batch_job = 2LL * batch_runs * p.batch_requests * (batch_prompt + p.batch_tokens);
    return chat + agent + batch_job;
}

UserWaits measure_user_waits(Backend& backend, const TextCodec& codec, const UserWaitParams& params) {
    check_params(params);
    UserWaits w;
    w.backend = backend.name();
    w.params = params;
    Generator gen(backend, codec);
    GenerateParams warm_up;
    warm_up.n_predict = warm_up_tokens;
    gen.generate(params.chat_prompt, warm_up);  // untimed: the cold start is another lesson's
    w.chat = chat(gen, codec, params);
    w.agent = agent(gen, params);
    w.batch = batch(backend, gen, codec, params);
    return w;
}

namespace {
nlohmann::ordered_json headline_json(const Headline& h) {
    return {{"metric", h.metric}, {"value", h.value}, {"unit", h.unit}, {"verdict", h.verdict}};
}
}  // namespace

nlohmann::ordered_json user_waits_json(const UserWaits& w) {
    const UserWaitParams& p = w.params;
    nlohmann::ordered_json j;
    j["backend"] = w.backend;
    const ChatWait& c = w.chat;
    // One token streamed has no second to time: null, as the text's "none".
    const bool decoded = c.n_tokens >= 2 && c.decode_tok_s > 0;
    const auto decode_figure = [&](double v) { return decoded ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
    j["chat"] = {{"headline", headline_json(c.headline)},
                 {"prompt", p.chat_prompt},
                 {"text", c.text},
                 {"ttft_ms", c.ttft_ms},
                 {"tpot_ms", decode_figure(c.tpot_ms)},
                 {"decode_tok_s", decode_figure(c.decode_tok_s)},
                 {"n_tokens", c.n_tokens},
                 {"n_words", c.n_words},
                 {"tokens_per_word", c.tokens_per_word},
                 {"tokens_per_word_measured_on", c.tokens_per_word_source},
                 {"reading_words_per_min", p.reading_words_per_min},
                 {"reading_tok_s", c.reading_tok_s},
                 {"fast_tok_s", p.fast_tok_s},
                 {"stream_over_reading", decode_figure(c.stream_over_reading)},
                 {"stream_over_fast", decode_figure(c.stream_over_fast)},
                 {"instant_ms", p.instant_ms},
                 {"flow_ms", p.flow_ms},
                 {"arrival_ms", c.arrival_ms},
                 {"read_ms", c.read_ms},
                 {"reader_waited_ms", c.reader_waited_ms},
                 {"reader_done_ms", c.reader_done_ms},
                 {"done_if_decode_2x_ms", c.done_if_decode_2x_ms},
                 {"done_if_ttft_half_ms", c.done_if_ttft_half_ms},
                 {"findings", c.findings}};
    const AgentWait& a = w.agent;
    nlohmann::ordered_json calls = nlohmann::ordered_json::array();
    for (const AgentCall& call : a.calls)
        calls.push_back({{"prompt", call.prompt},
                         {"output", call.output},
                         {"n_prompt", call.n_prompt},
                         {"n_generated", call.n_generated},
                         {"ttft_ms", call.ttft_ms},
                         {"total_ms", call.total_ms}});
    j["agent"] = {{"headline", headline_json(a.headline)},
                  {"calls", calls},
                  {"end_to_end_ms", a.end_to_end_ms},
                  {"ttft_sum_ms", a.ttft_sum_ms},
                  {"ttft_share", a.ttft_share},
                  {"saved_if_ttft_half_ms", a.saved_if_ttft_half_ms},
                  {"saved_if_tpot_half_ms", a.saved_if_tpot_half_ms},
                  {"findings", a.findings}};
    const BatchWait& b = w.batch;
    j["batch"] = {{"headline", headline_json(b.headline)},
                  {"n_requests", b.n_requests},
                  {"n_tokens", b.n_tokens},
                  {"sequential_ms", b.sequential_ms},
                  {"batched_ms", b.batched_ms},
                  {"sequential_tok_s", b.sequential_tok_s},
                  {"batched_tok_s", b.batched_tok_s},
                  {"gain", b.gain},
                  {"n_forward_batched", b.n_forward_batched},
                  {"sequential_mean_done_ms", b.sequential_mean_done_ms},
                  {"batched_mean_done_ms", b.batched_mean_done_ms},
                  {"findings", b.findings}};
    return j;
}

}  // namespace sixstep::serving
