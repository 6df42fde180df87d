// sixstep load --url URL [--model NAME] --rate R --duration S | --requests N [--exact-rate]
//              [--prompt-file F] [--max-tokens N] [--chat] [--json]
// An open-loop load generator against any OpenAI-compatible server (sixstep
// serve, llama-server, vLLM): Poisson arrivals, streamed answers, client-side
// TTFT / TPOT / ITL / E2E percentiles and throughput, each printed with its
// definition (app/server/load_generator.h). Exit 0 when every request
// completed, 1 when some failed (the report says which and why), 2 for bad
// input or a server that cannot be reached.
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/latency_table.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "app/server/load_generator.h"
#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/core/text.h"

namespace sixstep::cli {

namespace {

using json = nlohmann::ordered_json;

struct LoadOptions {
    server::LoadParams params;
    std::string prompt_file;
    bool json = false;
    bool model_given = false;  // --model was on the command line, maybe as ""
};

std::vector<std::string> read_prompts(const std::string& path) {
    std::istringstream in(read_regular_file(path, "the prompt file", 64u << 20));
    std::vector<std::string> prompts;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        // A request carries its prompt in JSON, which holds UTF-8 text only.
        if (const std::size_t bad = invalid_utf8_at(line); bad != std::string::npos)
            throw Error(SourceLocation{path, n, static_cast<int>(bad) + 1},
                        fmt::format("the prompt is not UTF-8 text (byte 0x{:02x}); a JSON request carries UTF-8 only",
                                    static_cast<unsigned char>(line[bad])));
        if (!line.empty()) prompts.push_back(line);
    }
    if (prompts.empty()) throw Error(fmt::format("{}:{}:1: no prompts (one prompt per line)", path, n + 1));
    return prompts;
}

// What the user or the server wrote, escaped and cut to a line: a server's
// model id or error body may hold anything, of any length.
std::string shown(const std::string& text) { return printable_cut(text, 300); }

// A figure as the table prints it: a whole number whole (20000 requests
// were "2e+04"), anything else to 4 significant digits.
std::string figure_text(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
    return fmt::format("{:.4g}", v);
}

int run_load_command(LoadOptions o) {
    // "" fell back to the first model the server lists, without a word.
    if (o.model_given && o.params.model.empty())
        throw Error("--model \"\": give a model name, or leave --model out to use the first model the server lists");
    if (!o.prompt_file.empty()) o.params.prompts = read_prompts(o.prompt_file);
    const server::LoadReport r = server::run_load(o.params);
    int n_failed = 0;
    for (const auto& q : r.requests) n_failed += !q.ok;
    if (o.json) {
        json j;
        j["url"] = o.params.url;
        j["model"] = r.model;
        j["latencies"] = latencies_json(r.latencies);
        j["totals"] = totals_json(r.totals);
        j["requests"] = json::array();
        for (const auto& q : r.requests)
            j["requests"].push_back({{"scheduled_ms", q.scheduled_ms}, {"sent_ms", q.sent_ms},
                                     {"ttft_ms", measured_or_null(q.chunk_ms.empty() ? -1 : q.chunk_ms.front() - q.sent_ms)},
                                     {"done_ms", q.done_ms}, {"n_chunks", q.chunk_ms.size()},
                                     {"n_output", q.n_output}, {"n_prompt", q.n_prompt}, {"ok", q.ok},
                                     {"error", q.error}});
        std::printf("%s\n", app::dump_json(j).c_str());
    } else {
        std::printf("load: %s, model %s, Poisson %g req/s, %s, max_tokens %d, temperature %g\n",
                    shown(o.params.url).c_str(), shown(r.model).c_str(), o.params.rate,
                    count_of(r.requests.size(), "request", "requests").c_str(), o.params.max_tokens,
                    o.params.temperature);
        print_latency_table(r.latencies, 12);
        std::printf("\n%-24s %10s  %-6s %s\n", "figure", "value", "unit", "definition");
        for (const auto& m : r.totals)
            std::printf("%-24s %10s  %-6s %s\n", m.name.c_str(), figure_text(m.value).c_str(), m.unit.c_str(),
                        m.definition.c_str());
        int n_shown = 0;
        for (const auto& q : r.requests)
            if (!q.ok && n_shown++ < 5) std::printf("failed: %s\n", shown(q.error).c_str());
    }
    return n_failed == 0 ? exit_ok : exit_failed;
}

}  // namespace

void add_load(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("load", "Open-loop Poisson load against an OpenAI-compatible server: TTFT, ITL, throughput");
    auto o = std::make_shared<LoadOptions>();
    server::LoadParams& p = o->params;
    sub->add_option("--url", p.url, "The server: http://HOST:PORT (a trailing /v1 is fine)")->required();
    sub->add_option("--model", p.model, "The model name to request (default: the first of GET /v1/models)")
        ->each([o](const std::string&) { o->model_given = true; });
    // Required: no default to show (the struct's 1 is not one a user gets).
    sub->add_option("--rate", p.rate, "Mean requests per second (Poisson arrivals)")->required()->default_str("");
    auto* duration = sub->add_option("--duration", p.duration_s, "Send requests for this many seconds");
    auto* requests = sub->add_option("--requests", p.n_requests, "Or send this many requests");
    duration->excludes(requests);
    sub->add_flag("--exact-rate", p.exact_rate,
                  "With --requests: scale the drawn gaps so the requests span exactly N / rate (a short Poisson run "
                  "is otherwise as dense as its draw)")
        ->needs(requests);
    sub->add_option("--prompt-file", o->prompt_file, "Prompts, one per line, used in turn (default: story openings)");
    sub->add_option("--max-tokens", p.max_tokens, "Most tokens per answer");
    sub->add_option("--temperature", p.temperature, "Sampling temperature sent (0: greedy)");
    sub->add_flag("--chat", p.chat, "Use /v1/chat/completions instead of /v1/completions");
    sub->add_option("--max-in-flight", p.max_in_flight, "Most requests open at once (arrivals beyond wait: 'late')");
    sub->add_option("--timeout", p.timeout_s, "Seconds before an open request is abandoned");
    sub->add_option("--seed", p.seed, "Seed of the arrival times")->check(seed_number());
    sub->add_flag("--json", o->json, "Print machine-readable JSON instead");
    add_progress_option(sub);
    add_examples(sub, {"sixstep load --url http://127.0.0.1:8080 --rate 20 --requests 200   # against `sixstep serve`"});
    commands.push_back({sub, [o] { return run_load_command(*o); }});
}

}  // namespace sixstep::cli
