// sixstep waits -m F.gguf [--chat-tokens 64] [--agent-calls 4] [--agent-tokens 24]
//              [--batch-requests 16] [--batch-tokens 32] [--reading-wpm 238] [-t T] [--json]
//   Three users of the same engine, each run live and judged by its own
//   number: chat by TTFT (and the stream against reading speed), an agent by
//   the end-to-end time of its chained calls, a batch job by throughput.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/user_wait.h"

namespace sixstep::cli {

namespace {

struct WaitsOptions {
    std::string model, backend = "cpu";
    int threads = 0;
    serving::UserWaitParams params;
    bool json = false;
};

void print_headline(const char* who, const serving::Headline& h) {
    std::printf("\n%s\n  >> %s = %s %s — %s\n", who, h.metric.c_str(),
                h.value >= 100 ? fmt::format("{:.0f}", h.value).c_str() : fmt::format("{:.2f}", h.value).c_str(),
                h.unit.c_str(), h.verdict.c_str());
}

int run_waits(const WaitsOptions& o) {
    using namespace sixstep::llm;
    using namespace sixstep::serving;
    const RunnableModel m = load_runnable_model(o.model, o.backend, o.threads);
    const UserWaits w = measure_user_waits(*m.backend, *m.codec, o.params);
    if (o.json) {
        nlohmann::ordered_json j;
        j["model"] = o.model;
        j.update(user_waits_json(w));
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }
    std::printf("What the user waits for — %s on %s (the number that matters for each user marked >>)\n",
                printable(o.model).c_str(), w.backend.c_str());

    const ChatWait& c = w.chat;
    print_headline("CHAT: a person reads the answer as it streams", c.headline);
    // One token has no gap after it: "TPOT 0.000 ms = 0 tokens/s" was made up.
    if (c.n_tokens >= 2)
        std::printf("  %s + %d tokens: TPOT %.3f ms = %.0f tokens/s\n", quote_text(w.params.chat_prompt).c_str(),
                    c.n_tokens, c.tpot_ms, c.decode_tok_s);
    else
        std::printf("  %s + %s: no TPOT (a token after the first is needed to time one)\n",
                    quote_text(w.params.chat_prompt).c_str(), count_of(static_cast<std::size_t>(c.n_tokens), "token", "tokens").c_str());
    for (const std::string& f : c.findings) std::printf("  - %s\n", f.c_str());

    const AgentWait& a = w.agent;
    print_headline("AGENT: chained calls, each prompt made from the previous answer", a.headline);
    for (std::size_t i = 0; i < a.calls.size(); ++i) {
        const AgentCall& call = a.calls[i];
        std::printf("  call %zu: %s → %s, TTFT %.2f ms, end-to-end %.2f ms\n", i + 1,
                    count_of(static_cast<std::size_t>(call.n_prompt), "prompt token", "prompt tokens").c_str(),
                    count_of(static_cast<std::size_t>(call.n_generated), "token", "tokens").c_str(), call.ttft_ms,
                    call.total_ms);
    }
    for (const std::string& f : a.findings) std::printf("  - %s\n", f.c_str());

    const BatchWait& b = w.batch;
    print_headline("BATCH JOB: many requests, nobody watching any one", b.headline);
    for (const std::string& f : b.findings) std::printf("  - %s\n", f.c_str());
    return exit_ok;
}

}  // namespace

void add_waits(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<WaitsOptions>();
    serving::UserWaitParams& p = o->params;
    auto* sub = app.add_subcommand("waits", "What the user waits for: chat (TTFT), an agent (end-to-end), a batch job "
                                            "(throughput), each run live");
    sub->add_option("-m,--model", o->model, "A GGUF model (Llama architecture)")->required()->transform(model_file());
    sub->add_option("--chat-tokens", p.chat_tokens, "Tokens streamed to the chat reader (default 64)");
    sub->add_option("--agent-calls", p.agent_calls, "Chained agent calls (default 4)");
    sub->add_option("--agent-tokens", p.agent_tokens, "Tokens per agent call (default 24)");
    sub->add_option("--batch-requests", p.batch_requests, "Requests in the batch job (default 16)");
    sub->add_option("--batch-tokens", p.batch_tokens, "Tokens per batch request (default 32)");
    sub->add_option("--reading-wpm", p.reading_words_per_min, "Reading speed, words/min (default 238, Brysbaert 2019)")
        ->check(finite_number(serving::min_reading_wpm, serving::max_reading_wpm));
    sub->add_option("--seed", p.seed, "Sampling seed of the batch job")->check(seed_number());
    add_threads_option(sub, o->threads);
    add_backend_option(sub, o->backend);
    sub->add_flag("--json", o->json, "Print one JSON object instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep waits -m stories-3m-f16.gguf --reading-wpm 119"});
    commands.push_back({sub, [o] { return run_waits(*o); }});
}

}  // namespace sixstep::cli
