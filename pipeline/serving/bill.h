// The bill: what a model costs to train once and to serve every day, in
// floating-point operations and in machine time measured on this machine.
//
//     training FLOPs            ≈ 6 · N · D          (N parameters, D training tokens;
//                                                     forward 2·N + backward 4·N per token)
//     inference FLOPs per token ≈ 2 · N              (one multiply and one add per weight)
//     inference FLOPs per day   = 2 · N · requests/day · tokens/request
//     crossover day             = 6·N·D ÷ (2·N · tokens/day) = 3·D ÷ tokens/day
//     training per request      = 6·N·D ÷ (requests/day · days)   (amortized over the life)
//
// Time comes from a measured decode rate (tokens/s of one stream on the
// engine, e.g. from tools/bench): a request of T tokens takes T ÷ rate, and
// the FLOP rate this machine reaches while decoding is 2·N·rate. "Load once,
// serve many": with a cold load of L seconds, n requests cost (L + n·T/rate)
// ÷ n each — the load is paid once and amortized over every request.
//
//     BillParams p;
//     p.n_params = 3844352;  p.n_train_tokens = 819200;  p.decode_tok_s = 900;
//     p.requests_per_day = 10000;  p.tokens_per_request = 200;  p.days = 365;
//     BillResult b = bill(p);    // throws sixstep::Error on a zero, negative or non-finite input
//     b.crossover_day            // 1.2288: inference has cost as much as training by day 2
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sixstep::serving {

// The bill's traffic, from a model called once in a thousand days to a
// trillion requests a day, for a day to a million days: past these the
// arithmetic prints hundreds of digits (or a day 10³⁰⁴) and means nothing.
inline constexpr double min_requests_per_day = 1e-3, max_requests_per_day = 1e12;
inline constexpr double min_tokens_per_request = 1, max_tokens_per_request = 1e9;
inline constexpr double min_days = 1, max_days = 1e6;
// The model and the machine, likewise: from one parameter to a thousand
// times today's largest models, a decode from one token in 1000 s to a
// billion a second, a load of up to 11 days (a 10^308 s load printed
// "3.17×10³⁰⁰ years").
inline constexpr double min_params = 1, max_params = 1e15;
inline constexpr double min_train_tokens = 1, max_train_tokens = 1e18;
inline constexpr double min_decode_tok_s = 1e-3, max_decode_tok_s = 1e9;
inline constexpr double max_load_s = 1e6, max_price_per_hour = 1e9;

// "1 day", "365 days": a count of days as written (`number`), with its noun.
inline std::string days_text(const std::string& number, double days) { return number + (days == 1 ? " day" : " days"); }

struct BillParams {
    double n_params = 0;            // N: parameters, > 0
    double n_train_tokens = 0;      // D: tokens seen in training, > 0
    double decode_tok_s = 0;        // measured decode rate of one stream, tokens/s, > 0
    double requests_per_day = 0;    // requests served per day, > 0
    double tokens_per_request = 0;  // tokens each request runs through the model (prompt + output), > 0
    double days = 0;                // service life in days, > 0
    double load_s = 0;              // cold load of the weights, seconds, >= 0 (0: no load-once table)
    double price_per_hour = 0;      // price of one machine-hour (any currency), >= 0 (0: times only)
    // Request counts for the load-once table (each > 0); empty → 1, 10, …, 10^6.
    std::vector<double> request_counts;
};

// Cumulative inference after `day` days, against training.
struct BillDay {
    double day = 0;
    double inference_flops = 0;       // 2·N·tokens/day·day
    double inference_to_training = 0; // inference_flops ÷ training FLOPs
    bool crossover = false;           // the first whole day on which inference >= training
};

// One request's share when the load is amortized over n requests.
struct LoadOncePoint {
    double n_requests = 0;
    double seconds_per_request = 0;  // load_s ÷ n + seconds of compute per request
    double load_share = 0;           // fraction of that which is the load
    double cost_per_request = 0;     // seconds_per_request × price per second (0 without a price)
};

struct BillResult {
    BillParams params;
    double train_flops = 0;              // 6·N·D
    double flops_per_token = 0;          // 2·N
    double achieved_flops_per_s = 0;     // 2·N·decode rate: this machine's FLOP rate while decoding
    double seconds_per_request = 0;      // tokens/request ÷ decode rate
    double tokens_per_day = 0;           // requests/day × tokens/request
    double inference_flops_per_day = 0;  // 2·N·tokens/day
    double inference_flops_lifetime = 0; // × days
    double inference_to_training = 0;    // lifetime inference ÷ training
    double crossover_day = 0;            // training ÷ inference per day (fractional)
    bool crossover_within_life = false;  // crossover_day <= days
    // Training amortized over every request of the life: 6·N·D ÷ (requests/day · days),
    // and that against the request's own inference, 2·N·tokens/request —
    // which comes to crossover_day ÷ days: a model called rarely carries
    // its training on each call.
    double training_flops_per_request = 0;
    double training_share_per_request = 0;
    double machine_hours_per_day = 0;    // one stream at the decode rate: tokens/day ÷ rate ÷ 3600
    double machine_hours_lifetime = 0;
    double training_hours_at_decode_rate = 0;  // 6·N·D ÷ achieved FLOP/s ÷ 3600 (an upper bound: training is batched)
    double cost_per_day = 0, cost_lifetime = 0, cost_training_at_decode_rate = 0;  // × price (0 without one)
    double load_break_even_requests = 0; // load_s ÷ seconds/request: beyond it the load is under half a request's cost
    std::vector<BillDay> timeline;       // day 1, a quarter, half, the crossover, the last day
    std::vector<LoadOncePoint> load_once;  // empty when load_s is 0
    std::vector<std::string> formula;    // every step with its numbers substituted
    std::vector<std::string> notes;      // the assumptions
};

// Throws sixstep::Error naming the input for a zero, negative or non-finite
// value, or when the results overflow (absurd inputs).
BillResult bill(const BillParams& params);

nlohmann::ordered_json bill_json(const BillResult& result);

}  // namespace sixstep::serving
