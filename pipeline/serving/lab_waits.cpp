// The serving lab's "what the user waits for" (lesson 15): a chat reader, an
// agent chaining calls and a batch job, each run live on the loaded model
// (serving/user_wait.h), each with the metric that decides it.
#include <fmt/format.h>

#include "pipeline/core/text.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

namespace {

constexpr char chat_tokens[] = "chat_tokens";
constexpr char agent_calls[] = "agent_calls";
constexpr char agent_tokens[] = "agent_tokens";
constexpr char batch_requests[] = "batch_requests";
constexpr char batch_tokens[] = "batch_tokens";
constexpr char reading_wpm[] = "reading_wpm";

// The request's fields as the engine's parameters; text(name) gives a
// field's value (LabFields when running, FieldLookup when declaring work).
template <class Text>
UserWaitParams params_of(const Text& text) {
    const auto whole = [&](const char* name) { return static_cast<int>(std::stod(text(name))); };
    UserWaitParams p;
    p.chat_tokens = whole(chat_tokens);
    p.agent_calls = whole(agent_calls);
    p.agent_tokens = whole(agent_tokens);
    p.batch_requests = whole(batch_requests);
    p.batch_tokens = whole(batch_tokens);
    p.reading_words_per_min = std::stod(text(reading_wpm));
    return p;
}

class WaitsLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        p_ = params_of([&](const char* name) { return f.text(name); });
        const auto count = [](int n, const char* one, const char* many) {
            return count_of(static_cast<std::size_t>(n), one, many);
        };
        ev.summary = fmt::format("chat: {} streamed; agent: {} × {}; batch job: {} × {}",
                                 count(p_.chat_tokens, "token", "tokens"), count(p_.agent_calls, "call", "calls"),
                                 count(p_.agent_tokens, "token", "tokens"),
                                 count(p_.batch_requests, "request", "requests"),
                                 count(p_.batch_tokens, "token", "tokens"));
        ev.out(chat_tokens, static_cast<double>(p_.chat_tokens), "tokens");
        ev.out(agent_calls, static_cast<double>(p_.agent_calls));
        ev.out(batch_requests, static_cast<double>(p_.batch_requests));
        ev.out(reading_wpm, p_.reading_words_per_min, "words/min");
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        llm::LlmModel& m = model.llm();
        ex.waits = measure_user_waits(m.backend(), m.codec(), p_);
        ev.summary = "the three users, each run live on the engine";
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const UserWaits& w = *ex.waits;
        ev.out("chat_ttft_ms", w.chat.ttft_ms, "ms", "TTFT");
        ev.out("chat_tpot_ms", w.chat.tpot_ms, "ms", "TPOT");
        ev.out("chat_decode_tok_s", w.chat.decode_tok_s, "tok/s");
        ev.out("reading_tok_s", w.chat.reading_tok_s, "tok/s");
        ev.out("tokens_per_word", w.chat.tokens_per_word);
        ev.out("reader_waited_ms", w.chat.reader_waited_ms, "ms");
        ev.out("agent_end_to_end_ms", w.agent.end_to_end_ms, "ms");
        ev.out("agent_ttft_sum_ms", w.agent.ttft_sum_ms, "ms");
        ev.out("batch_tok_s", w.batch.batched_tok_s, "tok/s");
        ev.out("sequential_tok_s", w.batch.sequential_tok_s, "tok/s");
        for (const Headline* h : {&w.chat.headline, &w.agent.headline, &w.batch.headline})
            ev.says(fmt::format("{}: {:.4g} {} — {}", h->metric, h->value, h->unit, h->verdict));
        ev.summary = fmt::format("chat TTFT {:.2f} ms; agent end-to-end {:.1f} ms; batch job {:.0f} tokens/s",
                                 w.chat.ttft_ms, w.agent.end_to_end_ms, w.batch.batched_tok_s);
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const UserWaits& w = *ex.waits;
        const ChatWait& c = w.chat;
        ev.out("stream_over_reading", c.stream_over_reading);
        ev.out("stream_over_fast", c.stream_over_fast);
        ev.out("ttft_over_flow", c.ttft_ms / p_.flow_ms);
        ev.out("agent_ttft_share", w.agent.ttft_share);
        ev.out("batch_gain", w.batch.gain);
        ev.out("reader_done_if_decode_2x", c.reader_done_ms > 0 ? c.done_if_decode_2x_ms / c.reader_done_ms : 0);
        for (const auto& f : c.findings) ev.says("chat: " + f);
        for (const auto& f : w.agent.findings) ev.says("agent: " + f);
        for (const auto& f : w.batch.findings) ev.says("batch: " + f);
        ev.summary = fmt::format("the stream runs {:.0f}× reading speed; TTFT is {:.0f}% of the agent's wait",
                                 c.stream_over_reading, 100 * w.agent.ttft_share);
        // Sentences, each whole (a screen translates them one by one), each
        // worded for the numbers measured: a decode slower than reading, an
        // answer of one token (no decode speed), an agent whose short
        // answers make TTFT most of its wait.
        // The TTFT to the card's three digits: "0.4 ms" beside its "0.373 ms".
        const std::string seen = fmt::format("The chat reader sees the first token after {} ms — {:.2f}% of "
                                             "Nielsen's one second",
                                             format_value(Value{c.ttft_ms}, 3), 100 * c.ttft_ms / p_.flow_ms);
        const std::string chat =
            c.n_tokens < 2 || c.decode_tok_s <= 0
                ? seen + "; the answer was one token, so there is no decode speed to compare with reading."
            : c.stream_over_reading >= 1
                ? seen + fmt::format(" — and then text arrives {:.0f}× faster than a person reads ({:.1f} tokens/s), "
                                     "so a faster decode would not be felt.",
                                     c.stream_over_reading, c.reading_tok_s)
                : seen + fmt::format(" — and then text arrives at {:.2f}× the speed a person reads ({:.1f} "
                                     "tokens/s): the reader waits for text, so a faster decode would be felt.",
                                     c.stream_over_reading, c.reading_tok_s);
        const std::size_t n_calls = w.agent.calls.size();
        const std::string calls = n_calls == 1 ? std::string("its one call") : fmt::format("its {} chained calls", n_calls);
        const std::string agent =
            w.agent.ttft_share < 0.5
                ? fmt::format(" The agent waited {:.1f} ms for {}, of which the first tokens were only {:.0f}%: for "
                              "it, end-to-end is what counts.",
                              w.agent.end_to_end_ms, calls, 100 * w.agent.ttft_share)
                : fmt::format(" The agent waited {:.1f} ms for {}, of which the first tokens were {:.0f}%: with "
                              "answers this short TTFT is most of it, and end-to-end is still what it waits for.",
                              w.agent.end_to_end_ms, calls, 100 * w.agent.ttft_share);
        return chat + agent + fmt::format(" The batch job got {:.0f} tokens/s.", w.batch.batched_tok_s);
    }

private:
    UserWaitParams p_;
};

}  // namespace

std::unique_ptr<LabExperiment> make_waits_lab() { return std::make_unique<WaitsLab>(); }

Work waits_lab_work(const FieldLookup& field) {
    Work w;
    w.forward_tokens = user_waits_positions_at_most(params_of([&](const char* name) { return field(name); }));
    return w;
}

void declare_waits_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    const UserWaitParams d;
    knobs.push_back(lab::whole(chat_tokens, 1, 4096, 48, "tokens", "waits: tokens streamed to the chat reader"));
    knobs.push_back(lab::whole(agent_calls, 1, 100, d.agent_calls, "", "waits: chained agent calls"));
    knobs.push_back(lab::whole(agent_tokens, 1, 4096, d.agent_tokens, "tokens", "waits: tokens per agent call"));
    knobs.push_back(lab::whole(batch_requests, 1, 256, 8, "", "waits: requests in the batch job"));
    knobs.push_back(lab::whole(batch_tokens, 1, 4096, 24, "tokens", "waits: tokens per batch request"));
    Knob wpm = lab::number(reading_wpm, min_reading_wpm, max_reading_wpm, d.reading_words_per_min, "words/min",
                           "waits: the reader's speed (238: adult silent reading, Brysbaert 2019)");
    wpm.slider_min = 100, wpm.slider_max = 1000;
    knobs.push_back(wpm);
    const Stage rq = Stage::request, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, chat_tokens), VT::number, "tokens", "waits: tokens streamed to the chat reader"},
        {path(rq, agent_calls), VT::number, "", "waits: chained agent calls"},
        {path(rq, batch_requests), VT::number, "", "waits: requests in the batch job"},
        {path(rq, reading_wpm), VT::number, "words/min", "waits: the reader's speed"},
        {path(op, "chat_ttft_ms"), VT::number, "ms", "waits: the chat's time to first token, measured"},
        {path(op, "chat_tpot_ms"), VT::number, "ms", "waits: the chat's time per output token, measured"},
        {path(op, "chat_decode_tok_s"), VT::number, "tok/s", "waits: 1000 ÷ TPOT"},
        {path(op, "reading_tok_s"), VT::number, "tok/s", "waits: reading speed in tokens (words/min ÷ 60 × tokens/word)"},
        {path(op, "tokens_per_word"), VT::number, "", "waits: tokens per word of the streamed text, measured"},
        {path(op, "reader_waited_ms"), VT::number, "ms", "waits: time the reader sat waiting for text after the first token"},
        {path(op, "agent_end_to_end_ms"), VT::number, "ms", "waits: the agent's chain, first call to last token"},
        {path(op, "agent_ttft_sum_ms"), VT::number, "ms", "waits: the first tokens of every call, summed"},
        {path(op, "batch_tok_s"), VT::number, "tok/s", "waits: the batch job, all requests through the stepper at once"},
        {path(op, "sequential_tok_s"), VT::number, "tok/s", "waits: the same requests one at a time"},
        {path(pp, "stream_over_reading"), VT::number, "", "waits: decode tokens/s ÷ reading tokens/s"},
        {path(pp, "stream_over_fast"), VT::number, "", "waits: decode tokens/s ÷ 20 tokens/s"},
        {path(pp, "ttft_over_flow"), VT::number, "", "waits: chat TTFT ÷ Nielsen's 1 s"},
        {path(pp, "agent_ttft_share"), VT::number, "", "waits: the agent's summed TTFT ÷ its end-to-end time"},
        {path(pp, "batch_gain"), VT::number, "", "waits: batched ÷ one-at-a-time throughput"},
        {path(pp, "reader_done_if_decode_2x"), VT::number, "",
         "waits: when the reader finishes had decode been twice as fast ÷ as measured"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
