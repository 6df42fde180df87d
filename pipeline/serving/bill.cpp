#include "pipeline/serving/bill.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/quantity.h"

namespace sixstep::serving {

namespace {

double finite_result(double v, const char* what) {
    if (!std::isfinite(v)) throw Error(fmt::format("bill: {} overflows: the inputs are absurdly large", what));
    return v;
}

// "3,844,352" for whole numbers below 10¹⁵, powers of ten above; a small
// fraction to its significant digits (a decode rate of 0.001 read "0.00").
std::string num(double v) {
    if (v >= 1e15) return readable_number(v, 4);
    return v != 0 && std::fabs(v) < 0.01 ? readable(v, 3) : with_commas(v, 2);
}

}  // namespace

BillResult bill(const BillParams& in) {
    BillResult r;
    r.params = in;
    // Said as before for a zero, a negative or a non-number; then the range.
    const auto positive_in = [](std::string_view what, double v, double lo, double hi) {
        return require_between(what, require_positive(what, v), lo, hi);
    };
    const double N = positive_in("parameters (N)", in.n_params, min_params, max_params);
    const double D = positive_in("training tokens (D)", in.n_train_tokens, min_train_tokens, max_train_tokens);
    const double rate = positive_in("decode rate (tokens/s)", in.decode_tok_s, min_decode_tok_s, max_decode_tok_s);
    const double rpd =
        require_between("requests per day", in.requests_per_day, min_requests_per_day, max_requests_per_day);
    const double tpr =
        require_between("tokens per request", in.tokens_per_request, min_tokens_per_request, max_tokens_per_request);
    const double days = require_between("days", in.days, min_days, max_days);
    const double load = require_between("load time (s)", require_non_negative("load time (s)", in.load_s), 0, max_load_s);
    const double price =
        require_between("price per hour", require_non_negative("price per hour", in.price_per_hour), 0, max_price_per_hour);
    std::vector<double> counts = in.request_counts;
    if (counts.empty()) counts = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    for (double n : counts) require_positive("request count", n);

    r.train_flops = finite_result(6 * N * D, "6·N·D");
    r.flops_per_token = finite_result(2 * N, "2·N");
    r.achieved_flops_per_s = finite_result(r.flops_per_token * rate, "2·N·rate");
    r.seconds_per_request = finite_result(tpr / rate, "seconds per request");
    r.tokens_per_day = finite_result(rpd * tpr, "tokens per day");
    r.inference_flops_per_day = finite_result(r.flops_per_token * r.tokens_per_day, "inference FLOPs per day");
    r.inference_flops_lifetime = finite_result(r.inference_flops_per_day * days, "lifetime inference FLOPs");
    r.inference_to_training = finite_result(r.inference_flops_lifetime / r.train_flops, "inference ÷ training");
    r.crossover_day = finite_result(r.train_flops / r.inference_flops_per_day, "the crossover day");
    r.crossover_within_life = r.crossover_day <= days;
    r.training_flops_per_request = finite_result(r.train_flops / (rpd * days), "training per request");
    r.training_share_per_request =
        finite_result(r.training_flops_per_request / (r.flops_per_token * tpr), "training share per request");
    r.machine_hours_per_day = finite_result(r.tokens_per_day / rate / 3600, "machine-hours per day");
    r.machine_hours_lifetime = finite_result(r.machine_hours_per_day * days, "machine-hours");
    r.training_hours_at_decode_rate = finite_result(r.train_flops / r.achieved_flops_per_s / 3600, "training hours");
    r.cost_per_day = finite_result(r.machine_hours_per_day * price, "cost per day");
    r.cost_lifetime = finite_result(r.machine_hours_lifetime * price, "lifetime cost");
    r.cost_training_at_decode_rate = finite_result(r.training_hours_at_decode_rate * price, "training cost");
    r.load_break_even_requests = finite_result(load / r.seconds_per_request, "the load break-even");

    // The timeline: day 1, a quarter, half and the whole life, and the first
    // whole day on which inference has caught up with training.
    const double cross_whole = std::ceil(r.crossover_day);
    std::vector<double> marks{1, std::round(days / 4), std::round(days / 2), days};
    if (r.crossover_within_life) marks.push_back(std::min(cross_whole, days));
    std::sort(marks.begin(), marks.end());
    marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
    for (double d : marks) {
        if (d <= 0 || d > days) continue;
        BillDay b;
        b.day = d;
        b.inference_flops = r.inference_flops_per_day * d;
        b.inference_to_training = b.inference_flops / r.train_flops;
        b.crossover = r.crossover_within_life && d == std::min(cross_whole, days);
        r.timeline.push_back(b);
    }

    if (load > 0) {
        for (double n : counts) {
            LoadOncePoint p;
            p.n_requests = n;
            p.seconds_per_request = load / n + r.seconds_per_request;
            p.load_share = (load / n) / p.seconds_per_request;
            p.cost_per_request = p.seconds_per_request * price / 3600;
            r.load_once.push_back(p);
        }
    }

    r.formula = {
        fmt::format("training FLOPs ≈ 6 × N × D = 6 × {} × {} = {}", num(N), num(D), flops(r.train_flops)),
        fmt::format("inference FLOPs per token ≈ 2 × N = 2 × {} = {}", num(N), flops(r.flops_per_token)),
        fmt::format("FLOP rate while decoding = 2 × N × decode rate = {} × {} tokens/s = {}", flops(r.flops_per_token),
                    num(rate), flops_per_s(r.achieved_flops_per_s)),
        fmt::format("time per request = tokens per request ÷ decode rate = {} ÷ {} tokens/s = {}", num(tpr), num(rate),
                    duration(r.seconds_per_request)),
        fmt::format("tokens per day = requests per day × tokens per request = {} × {} = {}", num(rpd), num(tpr),
                    num(r.tokens_per_day)),
        fmt::format("inference FLOPs per day = 2 × N × tokens per day = {} × {} = {}", flops(r.flops_per_token),
                    num(r.tokens_per_day), flops(r.inference_flops_per_day)),
        fmt::format("lifetime inference = per day × days = {} × {} = {} = {} × training", flops(r.inference_flops_per_day),
                    num(days), flops(r.inference_flops_lifetime), readable(r.inference_to_training, 3)),
        fmt::format("crossover day = 6·N·D ÷ (2·N × tokens per day) = 3 × D ÷ tokens per day = 3 × {} ÷ {} = {} → {}",
                    num(D), num(r.tokens_per_day), readable(r.crossover_day, 4),
                    r.crossover_within_life ? fmt::format("inference overtakes training on day {}", cross_whole)
                                            : fmt::format("not within {}", days_text(num(days), days))),
        fmt::format("training per request = 6·N·D ÷ (requests per day × days) = {} ÷ ({} × {}) = {} = {} × the "
                    "request's own inference (2 × N × tokens per request = {})",
                    flops(r.train_flops), num(rpd), num(days), flops(r.training_flops_per_request),
                    readable(r.training_share_per_request, 3), flops(r.flops_per_token * tpr)),
        fmt::format("machine time (one stream) = tokens per day ÷ decode rate = {} ÷ {} tokens/s = {} of machine time per day, {} "
                    "over {}",
                    num(r.tokens_per_day), num(rate), duration(r.machine_hours_per_day * 3600),
                    duration(r.machine_hours_lifetime * 3600), days_text(num(days), days)),
    };
    if (load > 0)
        r.formula.push_back(fmt::format(
            "time per request over n requests = (load + n × time per request) ÷ n = {} ÷ n + {}; {}",
            duration(load), duration(r.seconds_per_request),
            r.load_break_even_requests > 1
                ? fmt::format("the load outweighs the compute while n < load ÷ time per request = {}",
                              readable(r.load_break_even_requests, 3))
                : fmt::format("the load is less than one request's compute (load ÷ time per request = {}), so it "
                              "never dominates", readable(r.load_break_even_requests, 3))));
    if (price > 0)
        r.formula.push_back(fmt::format("cost = machine-hours × price = {} h × {} = {} per day, {} over the life",
                                        readable(r.machine_hours_per_day, 3), num(price),
                                        readable(r.cost_per_day, 3), readable(r.cost_lifetime, 3)));
    r.notes = {
        "6·N·D and 2·N count one multiply and one add per parameter and token (and twice that for the backward pass), "
        "as the usual rule does; N counts every parameter, the token-embedding table too, though a token only looks "
        "up its row there, so for a small model whose vocabulary table is a large share of it the figures run a "
        "little high; attention over the context adds more per token as the context grows.",
        "Machine time assumes one stream at the measured decode rate; batching serves many streams per step and "
        "divides it (see the batching lessons).",
        fmt::format("Training compute at this machine's decode FLOP rate would take {}; real training runs batched and "
                    "compute-bound, at a higher rate, so that is an upper bound.",
                    duration(r.training_hours_at_decode_rate * 3600)),
    };
    return r;
}

nlohmann::ordered_json bill_json(const BillResult& r) {
    nlohmann::ordered_json j;
    const BillParams& p = r.params;
    j["inputs"] = {{"n_params", p.n_params},         {"n_train_tokens", p.n_train_tokens},
                   {"decode_tok_s", p.decode_tok_s}, {"requests_per_day", p.requests_per_day},
                   {"tokens_per_request", p.tokens_per_request}, {"days", p.days},
                   {"load_s", p.load_s},             {"price_per_hour", p.price_per_hour}};
    j["train_flops"] = r.train_flops;
    j["flops_per_token"] = r.flops_per_token;
    j["achieved_flops_per_s"] = r.achieved_flops_per_s;
    j["seconds_per_request"] = r.seconds_per_request;
    j["tokens_per_day"] = r.tokens_per_day;
    j["inference_flops_per_day"] = r.inference_flops_per_day;
    j["inference_flops_lifetime"] = r.inference_flops_lifetime;
    j["inference_to_training"] = r.inference_to_training;
    j["crossover_day"] = r.crossover_day;
    j["crossover_within_life"] = r.crossover_within_life;
    j["training_flops_per_request"] = r.training_flops_per_request;
    j["training_share_per_request"] = r.training_share_per_request;
    j["machine_hours_per_day"] = r.machine_hours_per_day;
    j["machine_hours_lifetime"] = r.machine_hours_lifetime;
    j["training_hours_at_decode_rate"] = r.training_hours_at_decode_rate;
    if (p.price_per_hour > 0) {
        j["cost_per_day"] = r.cost_per_day;
        j["cost_lifetime"] = r.cost_lifetime;
        j["cost_training_at_decode_rate"] = r.cost_training_at_decode_rate;
    }
    j["timeline"] = nlohmann::ordered_json::array();
    for (const BillDay& d : r.timeline)
        j["timeline"].push_back({{"day", d.day},
                                 {"inference_flops", d.inference_flops},
                                 {"inference_to_training", d.inference_to_training},
                                 {"crossover", d.crossover}});
    if (!r.load_once.empty()) {
        j["load_break_even_requests"] = r.load_break_even_requests;
        j["load_once"] = nlohmann::ordered_json::array();
        for (const LoadOncePoint& l : r.load_once)
            j["load_once"].push_back({{"n_requests", l.n_requests},
                                      {"seconds_per_request", l.seconds_per_request},
                                      {"load_share", l.load_share},
                                      {"cost_per_request", l.cost_per_request}});
    }
    j["formula"] = r.formula;
    j["notes"] = r.notes;
    return j;
}

}  // namespace sixstep::serving
