// The endpoint kind's knobs (the request fields of its one experiment: a
// sweep of the arrival rate), every path its stages emit, its headlines and
// its panel. tests/server/test_endpoint_model.cpp runs it against a server on
// loopback and checks that every path it emits is declared here.
#include "pipeline/server/endpoint_description.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/stage.h"
#include "pipeline/core/text.h"
#include "pipeline/core/trace.h"
#include "pipeline/core/trace_keys.h"

namespace sixstep::server {

namespace {

namespace k = endpoint_keys;

std::string path(Stage s, const char* key) { return fmt::format("{}.{}", stage_name(s), key); }

Knob whole(const char* name, double lo, double hi, int default_value, const char* unit, const char* meaning) {
    Knob knob;
    knob.name = name;
    knob.type = KnobType::number;
    knob.target = KnobTarget::request;
    knob.default_value = std::to_string(default_value);
    knob.meaning = meaning;
    knob.min = lo, knob.max = hi, knob.whole = true, knob.unit = unit;
    return knob;
}

std::vector<Knob> knobs() {
    Knob u;
    u.name = k::utilizations;
    u.type = KnobType::text;
    u.target = KnobTarget::request;
    u.default_value = "0.2,0.5,0.8";
    u.meaning = "the loads to send, ascending, each from 0.01 to below 1: arrival rate × the measured service time";
    u.rule = [](const std::string& text) { parse_utilizations(text); };
    Knob batch = whole(k::max_batch, 1, 64, 1, "",
                       "most requests the lesson's own server runs at once (1: one at a time, a single-server queue); "
                       "ignored with a url");
    batch.slider_min = 1, batch.slider_max = 16;
    return {
        u,
        whole(k::requests, 5, 2000, 40, "", "requests sent at each rate (Poisson arrivals)"),
        whole(k::max_tokens, 1, 256, 8, "tokens", "most tokens each request generates"),
        whole(k::samples, 2, 200, 16, "",
              "before the sweep: requests sent one after another (TTFT alone), then as many at once (the service)"),
        batch,
        whole(k::seed, 0, 2147483647, 1, "", "seed of the arrival times"),
    };
}

std::vector<PathInfo> paths() {
    using VT = ValueType;
    const Stage rq = Stage::request, ld = Stage::load, fw = Stage::forward, op = Stage::output,
                pp = Stage::postprocess, rs = Stage::respond;
    std::vector<PathInfo> p = {
        {path(rq, k::utilizations), VT::numbers, "", "the loads asked for, ascending"},
        {path(rq, k::requests), VT::number, "", "requests sent at each rate"},
        {path(rq, k::max_tokens), VT::number, "tokens", "most tokens each request generates"},
        {path(rq, k::max_batch), VT::number, "", "most requests the lesson's own server runs at once"},
        {path(ld, k::url), VT::text, "", "the server's address (the lesson's own: an ephemeral loopback port)"},
        {path(ld, k::served_model), VT::text, "", "the model the server lists first (GET /v1/models), which every request names"},
        {path(ld, k::own_server), VT::text, "", "\"yes\": the lesson started this server; \"no\": model.url points elsewhere"},
        {path(fw, k::service_ms), VT::number, "ms",
         "mean gap between completions of requests kept queued: the server's time per request (1 ÷ its rate)"},
        {path(fw, k::service_scv), VT::number, "", "the gaps' squared coefficient of variation c²"},
        {path(fw, k::alone_ttft_ms), VT::number, "ms", "median TTFT of a request sent alone (no queue)"},
        {path(fw, k::sent), VT::number, "", "requests sent by the sweep, all rates"},
        {path(fw, k::failed), VT::number, "", "of them refused, broken or timed out"},
        {path(fw, k::wall_ms), VT::number, "ms", "real time the service timing and the sweep took"},
        {path(op, k::utilizations), VT::numbers, "", "the loads, ascending"},
        {path(op, k::rates), VT::numbers, "req/s", "the arrival rates sent: utilization ÷ service time"},
        {path(op, k::ttft_p50_ms), VT::numbers, "ms", "measured median TTFT at each rate (client side: first chunk − sent)"},
        {path(op, k::ttft_p90_ms), VT::numbers, "ms", "measured 90th percentile of TTFT at each rate"},
        {path(op, k::ttft_p99_ms), VT::numbers, "ms", "measured 99th percentile of TTFT at each rate"},
        {path(op, k::itl_p50_ms), VT::numbers, "ms",
         "measured median inter-token latency at each rate: the gaps between a request's streamed chunks, pooled "
         "(a late client reads several chunks at once, and their gaps count as ~0)"},
        {path(op, k::tpot_p50_ms), VT::numbers, "ms",
         "measured median TPOT at each rate: per request, (E2E − TTFT) ÷ (output tokens − 1); chunks read together "
         "between the first and the last do not move it"},
        {path(op, k::services_ms), VT::numbers, "ms",
         "the pace the lesson's own server kept at each rate, when it runs one request at a time: the mean time "
         "between completions of requests that queued (not measured, NaN, shown as —, where fewer than 8 did, and for another server; the "
         "prediction then uses forward.service_ms)"},
        {path(op, k::utilizations_measured), VT::numbers, "",
         "ρ at that pace: rate × service (a machine that slows the server raises it above the utilization asked "
         "for; over 1 the queue grows without end); NaN (shown as —) where the pace was not measured"},
        {path(op, k::request_throughput), VT::numbers, "req/s", "measured: completed requests ÷ duration, at each rate"},
        {path(op, k::output_throughput), VT::numbers, "tok/s", "measured: output tokens ÷ duration, at each rate"},
        {path(op, k::predicted_wait_ms), VT::numbers, "ms",
         "predicted mean wait: one server (M/G/1) simulated on the same arrival times, services drawn from the measured"},
        {path(op, k::predicted_ttft_p50_ms), VT::numbers, "ms",
         "predicted median TTFT: simulated wait percentile + the TTFT of a request alone"},
        {path(op, k::predicted_ttft_p90_ms), VT::numbers, "ms", "predicted 90th percentile of TTFT, likewise"},
        {path(op, k::predicted_ttft_p99_ms), VT::numbers, "ms", "predicted 99th percentile of TTFT, likewise"},
        {path(op, k::predicted_throughput), VT::numbers, "req/s",
         "predicted request throughput below saturation: every request sent served, over its arrivals' span + one service"},
        {path(pp, k::ttft_p90_growth), VT::number, "", "measured TTFT p90 at the highest rate ÷ at the lowest"},
        {path(pp, k::predicted_p90_growth), VT::number, "", "predicted TTFT p90 at the highest rate ÷ at the lowest"},
        {path(pp, k::itl_p50_growth), VT::number, "", "measured median ITL at the highest rate ÷ at the lowest"},
        {path(pp, k::tpot_p50_growth), VT::number, "", "measured median TPOT at the highest rate ÷ at the lowest"},
        {path(pp, k::rate_growth), VT::number, "", "highest rate ÷ lowest rate"},
        {path(pp, k::throughput_growth), VT::number, "", "measured request throughput at the highest rate ÷ at the lowest"},
        {path(pp, k::throughput_vs_offered), VT::number, "",
         "lowest over the rates of measured request throughput ÷ the rate sent"},
        {path(pp, k::p90_vs_predicted_at_highest), VT::number, "", "measured ÷ predicted TTFT p90 at the highest rate"},
        {path(pp, k::utilization_measured_at_highest), VT::number, "",
         "ρ at the pace the server kept at the highest rate (NaN where not measured)"},
        {path(pp, k::worst_p90_factor), VT::number, "",
         "largest factor between measured and predicted TTFT p90 over the rates (≥ 1, either way)"},
        {path(rs, sixstep::keys::text), VT::text, "", "what the sweep showed, in words"},
    };
    add_common_paths(p);
    return p;
}

std::vector<Headline> headlines() {
    return {
        {Stage::request, {{k::utilizations}}},
        {Stage::load, {{k::url}}},
        // Captions on the cards, as the serving lab's: a bare "5.9 ms" said nothing of what it was.
        {Stage::forward, {{k::service_ms, 3, false, "", "service time"}}},
        {Stage::output, {{k::ttft_p90_ms, 3, false, "", "TTFT p90"}}},
        // One ratio that says itself: "3.56 · 2.65" on the pill read as
        // nothing (the measured ÷ predicted p90 is on the panel).
        {Stage::postprocess, {{k::ttft_p90_growth, 3, false, "\u00d7", "TTFT p90 growth"}}},
        {Stage::respond, {{sixstep::keys::text}}},
    };
}

std::vector<PanelInfo> panels() {
    return {{real_server_panel,
             "the measured queueing curve: TTFT p50/p90/p99 and throughput against the arrival rate, beside the "
             "prediction"}};
}

}  // namespace

std::vector<double> parse_utilizations(const std::string& text) {
    std::vector<double> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string::npos) comma = text.size();
        const std::string item = text.substr(pos, comma - pos);
        pos = comma + 1;
        // Spaces around an item are fine ("0.2, 0.5"); the number is decimal.
        const std::size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
        const std::optional<double> number =
            b == std::string::npos ? std::nullopt : whole_number_text(std::string_view(item).substr(b, e - b + 1));
        if (!number)
            throw Error(fmt::format("\"utilizations\": \"{}\" is not a number (write them like 0.2,0.5,0.8)", item));
        const double u = *number;
        if (u < min_utilization || u >= 1)
            throw Error(fmt::format("\"utilizations\": {} is not from {:g} to below 1 (at 1 the queue never settles; "
                                    "below {:g} it is empty and the run only takes longer)",
                                    format_value(Value{u}), min_utilization, min_utilization));
        if (!out.empty() && u <= out.back())
            throw Error(fmt::format("\"utilizations\" must ascend: {} after {}", format_value(Value{u}),
                                    format_value(Value{out.back()})));
        out.push_back(u);
    }
    return out;
}

namespace {

// The work of one sweep, from its fields.
Work endpoint_work(const FieldLookup& field) {
    const auto whole = [&](const char* name) { return std::stoll(field(name)); };
    const long long n_rates = static_cast<long long>(parse_utilizations(field(k::utilizations)).size());
    Work w;
    w.served_requests = n_rates * whole(k::requests) + 2 * (whole(k::samples) + 1);
    w.generated_tokens = w.served_requests * whole(k::max_tokens);
    return w;
}

// The requests a sweep sends (each rate's, and twice samples + 1 to time the
// service) and the tokens they may generate, all at the forward stage.
WorkDeclaration work() {
    WorkDeclaration w;
    w.whole = endpoint_work;
    w.stage = Stage::forward;
    return w;
}

}  // namespace

const ModelDescription& endpoint_description() {
    static const ModelDescription d{"endpoint",
                                    "a real OpenAI-compatible server under Poisson load: its queueing curve, measured "
                                    "and predicted",
                                    knobs(), paths(), headlines(), /*trains=*/false, panels(),
                                    work(), /*check_request_value=*/{}, /*in_path_unit=*/{}};
    return d;
}

}  // namespace sixstep::server
