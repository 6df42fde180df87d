// The serving lab's bill (lesson 14): training FLOPs ≈ 6·N·D against
// inference ≈ 2·N per token over the model's life (serving/bill.h), with N
// counted from the loaded file, D from the bundled recipe (or the request),
// the decode rate measured here (tools/bench.h) and the load timed here.
#include <chrono>

#include <fmt/format.h>

#include "pipeline/core/text.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/bundled_model.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/tools/bench.h"

namespace sixstep::serving {

namespace {

constexpr char requests_per_day[] = "requests_per_day";
constexpr char tokens_per_request[] = "tokens_per_request";
constexpr char days[] = "days";
constexpr char train_tokens[] = "train_tokens";
using lab::bench_repetitions;
using lab::bench_tokens;

class BillLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        p_.requests_per_day = f.number(requests_per_day);
        p_.tokens_per_request = f.number(tokens_per_request);
        p_.days = f.number(days);
        const double d = f.number(train_tokens);
        p_.n_train_tokens = d > 0 ? d : static_cast<double>(bundled_model_recipe.tokens());
        n_gen_ = f.whole(bench_tokens);
        ev.summary = fmt::format("{} requests/day × {} tokens/request × {}, D = {} training tokens ({})",
                                 p_.requests_per_day, p_.tokens_per_request, days_text(fmt::format("{}", p_.days), p_.days),
                                 p_.n_train_tokens,
                                 d > 0 ? "given" : "the bundled recipe");
        ev.out(requests_per_day, p_.requests_per_day, "req/day");
        ev.out(tokens_per_request, p_.tokens_per_request, "tokens");
        ev.out(days, p_.days, "days");
        ev.out(train_tokens, p_.n_train_tokens, "tokens");
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        llm::LlmModel& m = model.llm();
        // The load a fresh instance pays: map the file again and make the
        // rows the CPU's matmuls read, timed.
        const auto t0 = std::chrono::steady_clock::now();
        const auto fresh = llm::LlamaModel::load(m.path());
        fresh->prepare_for_cpu();
        p_.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        p_.n_params = static_cast<double>(fresh->n_params());
        llm::BenchParams bp;
        bp.n_prompt = 0;
        bp.n_gen = n_gen_;
        bp.repetitions = bench_repetitions;
        p_.decode_tok_s = llm::run_bench(m.backend(), bp).decode.median_tok_s;
        ex.bill = bill(p_);
        ev.summary = fmt::format("decode measured: {:.0f} tokens/s (median of 3 runs of {}); load {:.2f} ms",
                                 p_.decode_tok_s, n_gen_, 1000 * p_.load_s);
        ev.out("decode_tok_s", p_.decode_tok_s, "tok/s");
        ev.out("load_s", p_.load_s, "s");
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const BillResult& b = *ex.bill;
        ev.out("n_params", b.params.n_params);
        ev.out("train_flops", b.train_flops, "FLOP");
        ev.out("flops_per_token", b.flops_per_token, "FLOP");
        ev.out("tokens_per_day", b.tokens_per_day, "tokens");
        ev.out("inference_flops_per_day", b.inference_flops_per_day, "FLOP");
        ev.out("inference_flops_lifetime", b.inference_flops_lifetime, "FLOP");
        ev.out("crossover_day", b.crossover_day, "days");
        ev.out("training_flops_per_request", b.training_flops_per_request, "FLOP");
        ev.out("machine_hours_per_day", b.machine_hours_per_day, "h");
        ev.out("seconds_per_request", b.seconds_per_request, "s");
        for (const std::string& line : b.formula) ev.says(line);
        ev.summary = fmt::format("training {} FLOP; inference {} FLOP a day; crossover on day {}",
                                 readable_number(b.train_flops), readable_number(b.inference_flops_per_day),
                                 format_value(Value{b.crossover_day}, 3));  // "day 1229", not "day 1.23e+03"
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const BillResult& b = *ex.bill;
        const BillParams& p = b.params;
        ev.out("inference_to_training", b.inference_to_training);
        ev.out("crossover_within_life", yes_no(b.crossover_within_life));
        ev.out("training_share_per_request", b.training_share_per_request);
        // The crossover is arithmetic: 6·N·D ÷ (2·N·tokens/day) = 3·D ÷ tokens/day.
        ev.out("crossover_check", b.crossover_day * b.tokens_per_day / (3 * p.n_train_tokens));
        const double first = b.load_once.empty() ? 0 : b.load_once.front().load_share;
        const double last = b.load_once.empty() ? 0 : b.load_once.back().load_share;
        ev.out("load_share_first", first);
        ev.out("load_share_last", last);
        ev.says(fmt::format("lifetime inference ÷ training = {} ÷ {} = {:.4g}", readable_number(b.inference_flops_lifetime, 4),
                            readable_number(b.train_flops, 4), b.inference_to_training));
        ev.says(fmt::format("crossover day = 3·D ÷ tokens/day = 3 × {:.0f} ÷ {:.0f} = {:.4g}", p.n_train_tokens,
                            b.tokens_per_day, b.crossover_day));
        const std::string life = days_text(fmt::format("{}", p.days), p.days);  // "365 days", "1 day"
        ev.summary = fmt::format("over {} inference is {:.3g}× training", life, b.inference_to_training);
        // Sentences, each whole (a screen translates them one by one); the
        // crossover within the days or after them, each in its own words.
        const std::string cost = fmt::format("Training this model took about {} FLOP; serving {} requests a day of {} "
                                             "tokens costs {} FLOP a day",
                                             readable_number(b.train_flops), with_commas(p.requests_per_day), p.tokens_per_request,
                                             readable_number(b.inference_flops_per_day));
        // whole from 100 up: "day 1229", "3650 requests", not 1.23×10³
        const auto day = [](double d) { return d >= 100 ? fmt::format("{:.0f}", d) : readable_number(d); };
        // Before the first day ends: "by day 0.164" said no day a reader counts.
        const std::string when =
            b.crossover_within_life && b.crossover_day < 1
                ? fmt::format(", so inference has cost as much as training within the first day ({} of it) and {}× as "
                              "much after {}.",
                              readable_number(b.crossover_day, 2), readable_number(b.inference_to_training), life)
            : b.crossover_within_life
                ? fmt::format(", so inference has cost as much as training by day {} and {}× as much after {}.",
                              day(b.crossover_day), readable_number(b.inference_to_training), life)
                : fmt::format(", so after {} inference has cost {}× training; it would catch up only on day {}, "
                              "beyond those {}.",
                              life, readable_number(b.inference_to_training), day(b.crossover_day), life);
        // What each request carries of the training, spread over the life.
        const std::string share = fmt::format(" Spread over the {} requests of those {}, the training is {}× each "
                                              "request's own compute.",
                                              with_commas(p.requests_per_day * p.days), life,
                                              readable_number(b.training_share_per_request));
        return cost + when + share +
               fmt::format(" The load ({:.2f} ms) is {}% of the cost of a single request (load + its compute) and {}% of "
                           "the cost of {} requests served after one load (the largest count of the load-once table).",
                           1000 * p.load_s, readable_number(100 * first, 2), readable_number(100 * last, 2),
                           with_commas(b.load_once.empty() ? 0.0 : b.load_once.back().n_requests));
    }

private:
    BillParams p_;
    int n_gen_ = 32;
};

}  // namespace

std::unique_ptr<LabExperiment> make_bill_lab() { return std::make_unique<BillLab>(); }

// The bill itself is arithmetic; the decode rate it uses is measured by a
// warm-up and the timed runs of bench_tokens each.
Work bill_lab_work(const FieldLookup& field) {
    Work w;
    w.forward_tokens = (bench_repetitions + 1) * lab::whole_field(field, bench_tokens);
    return w;
}

void declare_bill_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    Knob rpd = lab::number(requests_per_day, min_requests_per_day, max_requests_per_day, 10000, "req/day",
                           "bill: requests served per day");
    rpd.slider_min = 10, rpd.slider_max = 100000;
    knobs.push_back(rpd);
    knobs.push_back(lab::number(tokens_per_request, min_tokens_per_request, max_tokens_per_request, 200, "tokens",
                                "bill: tokens per request, prompt and output"));
    knobs.push_back(lab::number(days, min_days, max_days, 365, "days", "bill: service life"));
    knobs.push_back(lab::number(train_tokens, 0, 1e18, 0, "tokens",
                                "bill: D, tokens seen in training (0: the bundled model's recipe)"));
    knobs.push_back(lab::whole(bench_tokens, 1, 4096, 32, "tokens", "bill, quantization: tokens decoded per timed run of the decode rate"));
    const Stage rq = Stage::request, fw = Stage::forward, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, requests_per_day), VT::number, "req/day", "bill: requests per day"},
        {path(rq, tokens_per_request), VT::number, "tokens", "bill: tokens per request"},
        {path(rq, days), VT::number, "days", "bill: service life"},
        {path(rq, train_tokens), VT::number, "tokens", "bill: D, training tokens"},
        {path(fw, "decode_tok_s"), VT::number, "tok/s", "bill: decode rate of one stream, measured (median of 3)"},
        {path(fw, "load_s"), VT::number, "s", "bill: a fresh load of the model file, measured"},
        {path(op, "n_params"), VT::number, "", "bill: N, parameters counted from the file"},
        {path(op, "train_flops"), VT::number, "FLOP", "bill: training ≈ 6·N·D"},
        {path(op, "flops_per_token"), VT::number, "FLOP", "bill: inference per token ≈ 2·N"},
        {path(op, "tokens_per_day"), VT::number, "tokens", "bill: requests/day × tokens/request"},
        {path(op, "inference_flops_per_day"), VT::number, "FLOP", "bill: 2·N·tokens/day"},
        {path(op, "inference_flops_lifetime"), VT::number, "FLOP", "bill: per day × days"},
        {path(op, "crossover_day"), VT::number, "days", "bill: the day inference has cost as much as training"},
        {path(op, "training_flops_per_request"), VT::number, "FLOP",
         "bill: training amortized over every request of the life, 6·N·D ÷ (requests/day × days)"},
        {path(op, "machine_hours_per_day"), VT::number, "h", "bill: one stream at the measured rate, hours a day"},
        {path(op, "seconds_per_request"), VT::number, "s", "bill: tokens/request ÷ decode rate"},
        {path(pp, "inference_to_training"), VT::number, "", "bill: lifetime inference FLOPs ÷ training FLOPs"},
        {path(pp, "crossover_within_life"), VT::text, "", "bill: \"yes\" when the crossover comes within the days"},
        {path(pp, "training_share_per_request"), VT::number, "",
         "bill: that amortized training ÷ the request's own inference (2·N·tokens/request); = crossover day ÷ days"},
        {path(pp, "crossover_check"), VT::number, "",
         "bill: crossover day × tokens/day ÷ (3·D): 1 when the crossover is 6·N·D ÷ (2·N·tokens/day)"},
        {path(pp, "load_share_first"), VT::number, "", "bill: share of the load in the cost of the first request"},
        {path(pp, "load_share_last"), VT::number, "", "bill: and when it is amortized over the most requests"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
