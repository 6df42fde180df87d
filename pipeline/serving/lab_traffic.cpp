// The serving lab's traffic (lessons 10 and 11): a workload of requests
// through the scheduler on the engine, timed on the virtual clock
// (traffic.h); with `compare`, the same arrivals again with one thing
// changed — the other batching policy, the prefix cache the other way, the
// other KV layout — and each figure of this run ÷ the baseline's. With a
// TTFT or TPOT target, goodput: requests meeting every target ÷ duration.
#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/arrivals.h"
#include "pipeline/serving/scheduler.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/serving/traffic.h"
#include "pipeline/serving/workload.h"

namespace sixstep::serving {

namespace {

// What `compare` may change (besides none): each runs the arrivals again.
constexpr const char* compared_things[] = {"policy", "prefix_cache", "kv_layout"};

// The decode passes' costs that compare: prefix_cache answers: after a
// prefill and later, in this run and the baseline.
constexpr const char* decode_after_prefill = "decode_after_prefill_ms";
constexpr const char* baseline_decode_after_prefill = "baseline_decode_after_prefill_ms";
constexpr const char* decode_later = "decode_later_ms";
constexpr const char* baseline_decode_later = "baseline_decode_later_ms";
// Whether both runs generated the same tokens.
constexpr const char* outputs_identical = "outputs_identical";

double p50(const TrafficReport& r, const char* key) { return r.latency(key).summary.p50; }

// TPOT needs a second token: with one token each no request has one, and
// the median of nothing read "0 ms" (a `below` on it held for nothing).
bool has_tpot(const TrafficReport& r) { return r.latency("tpot").summary.count > 0; }
std::string tpot_text(const TrafficReport& r, std::string_view none) {
    return has_tpot(r) ? format_value(Value{p50(r, "tpot")}, 3) + " ms" : std::string(none);
}

// target_unit "alone": the targets are multiples of what one request takes on
// an empty server; rate_unit "alone": the rate counts arrivals per the time
// that request takes from arrival to its last token. Both are measured on
// this machine first, so a lesson's targets and load mean the same on a fast
// machine and a slow one (a rate in requests per second that queues up a
// laptop leaves a fast server idle, and the other way round).
constexpr int alone_runs = 5;

struct Alone {
    double ttft_ms = 0, tpot_ms = 0, e2e_ms = 0;  // medians over alone_runs
};

// The workload's first request alone, arriving at 0 and generating its
// max_tokens (at least 2, so it has a TPOT) without stopping at end of text.
Alone serve_alone(llm::Backend& backend, const llm::TextCodec& codec, RequestSpec r, TrafficParams p) {
    r.arrival_ms = 0;
    r.max_tokens = std::max(2, p.workload.max_tokens);
    p.scheduler.stop_at_eog = false;
    p.targets = {};
    std::vector<double> ttft, tpot, e2e;
    for (int i = 0; i < alone_runs; ++i) {
        p.warmup = i == 0;
        const TrafficRun run = run_traffic(backend, codec, {r}, p);
        ttft.push_back(ttft_ms(run.requests.front()));
        tpot.push_back(tpot_ms(run.requests.front()));
        e2e.push_back(e2e_ms(run.requests.front()));
    }
    return {summarize(std::move(ttft)).p50, summarize(std::move(tpot)).p50, summarize(std::move(e2e)).p50};
}

}  // namespace

const std::vector<TrafficFigure>& traffic_figures() {
    static const std::vector<TrafficFigure> all = {
        {"ttft_p50_ms", "ms", "median TTFT from arrival (first token − arrival, queueing included)", "ttft_p50_ratio",
         [](const TrafficReport& r) { return p50(r, "ttft"); }},
        {"ttft_p90_ms", "ms", "90th percentile of TTFT from arrival", "ttft_p90_ratio",
         [](const TrafficReport& r) { return r.latency("ttft").summary.p90; }},
        {"ttft_sched_p50_ms", "ms", "median TTFT from first scheduling (queueing left out)", "ttft_sched_p50_ratio",
         [](const TrafficReport& r) { return p50(r, "ttft_sched"); }},
        {"queue_p50_ms", "ms", "median queue time (first scheduled − arrival)", nullptr,
         [](const TrafficReport& r) { return p50(r, "queue"); }},
        {"tpot_p50_ms", "ms", "median TPOT ((E2E − TTFT) ÷ (output tokens − 1), vLLM)", "tpot_p50_ratio",
         [](const TrafficReport& r) { return p50(r, "tpot"); }, false, has_tpot},
        {"e2e_p50_ms", "ms", "median end-to-end latency (last token − arrival)", "e2e_p50_ratio",
         [](const TrafficReport& r) { return p50(r, "e2e"); }},
        {"output_throughput", "tok/s", "output tokens ÷ duration", "output_throughput_ratio",
         [](const TrafficReport& r) { return r.total("output_throughput").value; }},
        {"duration_s", "s", "virtual time from the first arrival to the last token", "duration_ratio",
         [](const TrafficReport& r) { return r.total("duration").value; }},
        {"running_peak", "", "most requests running at once (holding a batch slot and KV memory)", "running_peak_ratio",
         [](const TrafficReport& r) { return r.total("running_peak").value; }},
        {"running_mean", "", "requests running, time-weighted mean", "running_mean_ratio",
         [](const TrafficReport& r) { return r.total("running_mean").value; }},
        {"batch_occupancy", "%", "requests in a pass ÷ max batch, time-weighted", "batch_occupancy_ratio",
         [](const TrafficReport& r) { return r.total("batch_occupancy").value; }},
        {"preemptions", "", "times a request gave its KV blocks back and was recomputed later", nullptr,
         [](const TrafficReport& r) { return r.total("preemptions").value; }},
        {"prefill_computed", "tokens", "prompt positions computed by forward passes (recomputes included)", "prefill_computed_ratio",
         [](const TrafficReport& r) { return r.total("prefill_computed").value; }},
        {"prefix_cached", "tokens", "prompt positions adopted from the prefix cache", nullptr,
         [](const TrafficReport& r) { return r.total("prefix_cached").value; }},
        {"kv_token_share", "%", "KV positions holding tokens ÷ positions set aside, time-weighted", "kv_token_share_ratio",
         [](const TrafficReport& r) { return r.total("kv_token_share").value; }},
        {"kv_internal_waste", "% of pool", "positions set aside but empty ÷ pool, time-weighted", nullptr,
         [](const TrafficReport& r) { return r.total("kv_internal_waste").value; }},
        {"kv_external_waste", "% of pool", "free positions in holes too small for the next request ÷ pool", nullptr,
         [](const TrafficReport& r) { return r.total("kv_external_waste").value; }},
        {"goodput", "req/s",
         "requests meeting every target (TTFT from arrival, TPOT as vLLM; DistServe's goodput, vLLM bench's "
         "--goodput) ÷ duration",
         "goodput_ratio", [](const TrafficReport& r) { return r.total("goodput").value; }, true},
        {"goodput_share", "%", "requests meeting every target ÷ requests completed", nullptr,
         [](const TrafficReport& r) { return r.total("goodput_share").value; }, true},
    };
    return all;
}

namespace {

class TrafficLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        TrafficParams& p = run_;
        p.workload.arrivals.kind = ArrivalKind::poisson;
        p.workload.arrivals.rate = f.number(keys::rate);
        p.workload.arrivals.count = f.whole(keys::requests);
        p.workload.arrivals.seed = static_cast<std::uint64_t>(f.whole(keys::seed));
        p.workload.max_tokens = f.whole(keys::max_tokens);
        p.workload.min_tokens = f.whole(keys::min_tokens);
        if (p.workload.min_tokens > p.workload.max_tokens)
            throw Error(fmt::format("\"min_tokens\" {} is above \"max_tokens\" {}", p.workload.min_tokens,
                                    p.workload.max_tokens));
        p.workload.shared_prefix = f.whole(keys::shared_prefix);
        p.scheduler.policy = *parse_batch_policy(f.text(keys::policy));
        p.scheduler.max_batch = f.whole(keys::max_batch);
        p.scheduler.max_step_tokens = f.whole(keys::step_tokens);
        p.scheduler.prefix_cache = f.on(keys::prefix_cache);
        p.scheduler.kv_layout = f.text(keys::kv_layout) == "contiguous" ? KvLayout::contiguous : KvLayout::paged;
        p.kv_blocks = f.whole(keys::kv_blocks);
        p.block_size = f.whole(keys::block_size);
        if (p.scheduler.prefix_cache && p.scheduler.kv_layout == KvLayout::contiguous)
            throw Error("\"prefix_cache\" needs the paged KV layout: cached blocks are shared pages");
        check_batch_fits_kv(p.scheduler.max_batch, p.kv_blocks, p.block_size);
        target_unit_ = f.text(keys::target_unit);
        rate_unit_ = f.text(keys::rate_unit);
        ttft_target_ = f.number(keys::ttft_target);
        tpot_target_ = f.number(keys::tpot_target);
        compare_ = f.text(keys::compare);
        base_ = p;
        if (compare_ == "policy") {
            base_.scheduler.policy = p.scheduler.policy == BatchPolicy::continuous ? BatchPolicy::static_batching
                                                                                   : BatchPolicy::continuous;
            run_label_ = std::string(batch_policy_name(p.scheduler.policy));
            baseline_label_ = std::string(batch_policy_name(base_.scheduler.policy));
        } else if (compare_ == "prefix_cache") {
            if (p.scheduler.kv_layout == KvLayout::contiguous)
                throw Error("compare: prefix_cache needs the paged KV layout");
            base_.scheduler.prefix_cache = !p.scheduler.prefix_cache;
            run_label_ = fmt::format("prefix cache {}", p.scheduler.prefix_cache ? "on" : "off");
            baseline_label_ = fmt::format("prefix cache {}", base_.scheduler.prefix_cache ? "on" : "off");
        } else if (compare_ == "kv_layout") {
            if (p.scheduler.prefix_cache) throw Error("compare: kv_layout runs without the prefix cache (it needs pages)");
            base_.scheduler.kv_layout = p.scheduler.kv_layout == KvLayout::paged ? KvLayout::contiguous : KvLayout::paged;
            run_label_ = std::string(kv_layout_name(p.scheduler.kv_layout));
            baseline_label_ = std::string(kv_layout_name(base_.scheduler.kv_layout));
        }
        rate_ = p.workload.arrivals.rate;
        ev.summary = fmt::format(fmt::runtime(p.workload.arrivals.count == 1 ? "{} request at {} {}, {} batching{}"
                                                                            : "{} requests at {} {}, {} batching{}"),
                                 p.workload.arrivals.count,
                                 format_value(Value{rate_}), rate_alone() ? "per E2E alone" : "req/s",
                                 batch_policy_name(p.scheduler.policy),
                                 compared() ? fmt::format(", compared with {}", baseline_label_) : "");
        ev.out(keys::requests, static_cast<double>(p.workload.arrivals.count));
        ev.out(keys::rate, rate_);  // in rate_unit; forward.rate_req_s has it in req/s
        ev.out(keys::rate_unit, rate_unit_);
        ev.out(keys::policy, std::string(batch_policy_name(p.scheduler.policy)));
        ev.out(keys::shared_prefix, static_cast<double>(p.workload.shared_prefix), "tokens");
        ev.out(keys::compare, compare_);
        if (compared()) ev.out(keys::baseline, baseline_label_);
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        ex.compare = compared() ? compare_ : std::string();
        ex.run_label = run_label_;
        ex.baseline_label = baseline_label_;
        llm::LlmModel& m = model.llm();
        const int bos = m.vocab().add_bos() ? m.vocab().bos() : -1;
        std::vector<RequestSpec> reqs = make_workload(run_.workload, m.codec(), bos);
        const bool targets_alone = has_target() && target_unit_ == "alone";
        std::optional<Alone> alone;
        if (targets_alone || rate_alone()) {
            alone = serve_alone(m.backend(), m.codec(), reqs.front(), run_);
            ev.out(keys::ttft_alone_ms, alone->ttft_ms, "ms");
            ev.out(keys::tpot_alone_ms, alone->tpot_ms, "ms");
            ev.out(keys::e2e_alone_ms, alone->e2e_ms, "ms");
        }
        if (rate_alone()) {
            // The same requests (their prompts and lengths are drawn apart
            // from the arrivals), arriving at rate_ per E2E alone.
            const double per_s = rate_per_e2e_alone(rate_, alone->e2e_ms);
            run_.workload.arrivals.rate = base_.workload.arrivals.rate = per_s;
            reqs = make_workload(run_.workload, m.codec(), bos);
        }
        ev.out(keys::rate_req_s, run_.workload.arrivals.rate, "req/s");
        // The same targets for both arms, in milliseconds.
        SloTargets& t = run_.targets;
        t = {ttft_target_, tpot_target_};
        if (targets_alone) t = {ttft_target_ * alone->ttft_ms, tpot_target_ * alone->tpot_ms};
        base_.targets = t;
        if (t.ttft_ms > 0) ev.out(keys::ttft_target_ms, t.ttft_ms, "ms");
        if (t.tpot_ms > 0) ev.out(keys::tpot_target_ms, t.tpot_ms, "ms");
        // Both arms' passes in turn: a ratio of their figures holds on a
        // machine whose load changes while they run (run_traffic_side_by_side).
        if (compared()) {
            const TrafficParams arms[] = {run_, base_};
            std::vector<TrafficRun> runs = run_traffic_side_by_side(m.backend(), m.codec(), reqs, arms);
            ex.run = std::move(runs[0]);
            ex.baseline = std::move(runs[1]);
        } else {
            ex.run = run_traffic(m.backend(), m.codec(), reqs, run_);
        }
        double passes = 0, engine = 0, cpu_wait = 0;
        for (const TrafficRun* r : {&*ex.run, ex.baseline ? &*ex.baseline : nullptr}) {
            if (!r) continue;
            passes += static_cast<double>(r->steps.size());
            for (const StepRecord& s : r->steps) {
                engine += s.shape.forward_ms + s.shape.sample_ms;
                cpu_wait += s.shape.cpu_wait_ms;
            }
        }
        ev.summary = fmt::format(fmt::runtime(passes == 1 ? "{} forward pass{}" : "{} forward passes{}"), passes,
                                 ex.baseline ? " (both runs)" : "");
        // A busy machine's share, said where it is large enough to wonder about.
        if (cpu_wait > 0.05 * engine)
            ev.summary += fmt::format("; the engine waited {} ms of {} ms for a CPU, left out of the clock",
                                      format_value(Value{cpu_wait}, 3), format_value(Value{engine}, 3));
        ev.out(keys::passes, passes);
        ev.out(keys::engine_ms, engine, "ms");
        ev.out(keys::cpu_wait_ms, cpu_wait, "ms");
        ev.out(keys::virtual_s, ex.run->info.duration_ms / 1000.0, "s");
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        for (const TrafficFigure& f : traffic_figures()) {
            if (f.needs_target && !has_target()) continue;
            if (f.measured(ex.run->report)) ev.out(f.key, f.get(ex.run->report), f.unit);
            if (ex.baseline && f.measured(ex.baseline->report))
                ev.out(std::string(keys::baseline_prefix) + f.key, f.get(ex.baseline->report), f.unit);
        }
        const TrafficReport& r = ex.run->report;
        ev.summary = fmt::format("p50 TTFT {:.1f} ms, p50 TPOT {}, {:.0f} tok/s", p50(r, "ttft"), tpot_text(r, "none"),
                                 r.total("output_throughput").value);
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const TrafficReport& r = ex.run->report;
        if (!ex.baseline) {
            ev.summary = "no baseline (compare: none)";
            const bool one = ex.run->requests.size() == 1;
            // Three digits, as the panel beside it prints the same figures.
            std::string said = fmt::format(fmt::runtime(one ? "{} request served in {:.2f} s of virtual time: median TTFT "
                                                              "{} ms, median TPOT {}, {:.0f} output tokens/s."
                                                            : "{} requests served in {:.2f} s of virtual time: median "
                                                              "TTFT {} ms, median TPOT {}, {:.0f} output tokens/s."),
                                           ex.run->requests.size(), r.total("duration").value,
                                           format_value(Value{p50(r, "ttft")}, 3),
                                           tpot_text(r, "none (no request had a second token)"),
                                           r.total("output_throughput").value);
            if (has_target())
                said += fmt::format(" {}% met every target: goodput {} req/s.",
                                    format_value(Value{r.total("goodput_share").value}, 3),
                                    format_value(Value{r.total("goodput").value}, 3));
            return said;
        }
        const TrafficReport& b = ex.baseline->report;
        // The same requests in both arms (arrival order): a scheduling or
        // caching choice must not change what any of them generates.
        const std::vector<RequestRecord>& ra = ex.run->requests;
        const std::vector<RequestRecord>& rb = ex.baseline->requests;
        std::size_t differ = 0;
        if (ra.size() != rb.size()) differ = std::max(ra.size(), rb.size());
        else
            for (std::size_t i = 0; i < ra.size(); ++i) differ += ra[i].output != rb[i].output;
        ev.out(outputs_identical, differ == 0 ? std::string("yes") : fmt::format("{} of {} differ", differ, ra.size()));
        for (const TrafficFigure& f : traffic_figures()) {
            if (!f.ratio || (f.needs_target && !has_target()) || !f.measured(r) || !f.measured(b)) continue;
            const double x = f.get(r), y = f.get(b);
            if (y == 0) continue;  // no ratio to a zero
            ev.out(f.ratio, x / y);
            // 16610, not 1.661e+04; with the digits that make the figures divide
            // to the quotient printed.
            const Division d = division(
                x, y, 4, [](double v, int p) { return format_value(Value{v}, p); },
                [](double q) { return fmt::format("{:.3f}", q); });
            ev.says(fmt::format("{}: {} {} ÷ {} {} = {}", f.key, ex.run_label, d.a, ex.baseline_label, d.b, d.q));
        }
        // A prefix cache shortens prefills, and with them the slow decode
        // passes that follow a long one (traffic_metrics.h): TPOT changes
        // even when no request shares a pass. Said where it can be seen.
        if (compare_ == "prefix_cache") {
            const DecodePassCosts dr = decode_pass_costs(ex.run->steps), db = decode_pass_costs(ex.baseline->steps);
            ev.out(decode_after_prefill, dr.after_prefill_ms, "ms");
            ev.out(baseline_decode_after_prefill, db.after_prefill_ms, "ms");
            ev.out(decode_later, dr.later_ms, "ms");
            ev.out(baseline_decode_later, db.later_ms, "ms");
            const auto ms = [](double v) { return format_value(Value{v}, 3); };
            ev.says(fmt::format("decode passes, median: right after a prefill {} ms, later {} ms ({}); {} and {} ms ({})",
                                ms(dr.after_prefill_ms), ms(dr.later_ms), ex.run_label, ms(db.after_prefill_ms),
                                ms(db.later_ms), ex.baseline_label));
        }
        const double t = p50(r, "ttft"), tb = p50(b, "ttft");
        ev.summary = fmt::format("{} vs {}: median TTFT × {:.2f}", ex.run_label, ex.baseline_label, t / tb);
        // TTFT from arrival (the queue included), and TPOT beside it: what
        // one side gains in waiting it may pay for in typing speed.
        std::string said = fmt::format(
            "Same arrivals, {} vs {}: median TTFT {} vs {} ms (from arrival), median TPOT {} vs {} ms, "
            "requests running at once at most {} vs {}, {:.0f} vs {:.0f} output tokens/s.",
            ex.run_label, ex.baseline_label, format_value(Value{t}, 3), format_value(Value{tb}, 3), has_tpot(r) ? format_value(Value{p50(r, "tpot")}, 3) : "none",
            has_tpot(b) ? format_value(Value{p50(b, "tpot")}, 3) : "none", r.total("running_peak").value, b.total("running_peak").value,
            r.total("output_throughput").value, b.total("output_throughput").value);
        // Goodput: what the two medians cannot say, how many requests got both.
        if (has_target())
            said += fmt::format(" Meeting every target: {}% vs {}% of requests, goodput {} vs {} req/s.",
                                format_value(Value{r.total("goodput_share").value}, 3),
                                format_value(Value{b.total("goodput_share").value}, 3),
                                format_value(Value{r.total("goodput").value}, 3),
                                format_value(Value{b.total("goodput").value}, 3));
        return said;
    }

private:
    bool compared() const { return compare_ != "none"; }
    bool has_target() const { return ttft_target_ > 0 || tpot_target_ > 0; }
    bool rate_alone() const { return rate_unit_ == "alone"; }

    TrafficParams run_, base_;  // the run as asked; the other arm of a comparison
    std::string compare_ = "none";
    std::string target_unit_ = "ms";
    std::string rate_unit_ = "req/s";
    double rate_ = 0;  // as the lesson gave it, in rate_unit_
    double ttft_target_ = 0, tpot_target_ = 0;  // in target_unit_; 0: none
    std::string run_label_, baseline_label_;
};

}  // namespace

std::unique_ptr<LabExperiment> make_traffic_lab() { return std::make_unique<TrafficLab>(); }

// Counted at its most: every request prefilled and generated to max_tokens
// (its prompt at most the shared prefix and the longest built-in opening),
// in both arms of a comparison. A preempted request's recompute is not
// counted: the pool's size bounds how often that happens, not the lesson.
Work traffic_lab_work(const FieldLookup& field) {
    const auto whole = [&](const char* name) { return lab::whole_field(field, name); };
    long long opening = 0;
    for (const std::string& o : story_openings()) opening = std::max(opening, llm::encoded_tokens_at_most(o));
    const long long prompt = whole(keys::shared_prefix) + opening;
    const long long arms = field(keys::compare) == "none" ? 1 : 2;
    Work w;
    w.forward_tokens = arms * whole(keys::requests) * (prompt + whole(keys::max_tokens));
    const bool target = std::stod(field(keys::ttft_target)) > 0 || std::stod(field(keys::tpot_target)) > 0;
    if ((target && field(keys::target_unit) == "alone") || field(keys::rate_unit) == "alone")
        w.forward_tokens += alone_runs * (prompt + std::max<long long>(2, whole(keys::max_tokens)));
    return w;
}

void declare_traffic_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    const TrafficParams d;
    knobs.push_back(lab::choice(keys::policy, {"continuous", "static"},
                                "traffic: continuous (join and leave every step) or static batching (a batch ends "
                                "with its longest request)"));
    std::vector<std::string> compares = {"none"};
    compares.insert(compares.end(), std::begin(compared_things), std::end(compared_things));
    knobs.push_back(lab::choice(keys::compare, compares,
                                "traffic: run the same arrivals again with the other policy, the prefix cache the "
                                "other way, or the other KV layout"));
    knobs.push_back(lab::whole(keys::requests, 1, 10000, 32, "", "traffic: requests in the workload"));
    Knob rate = lab::knob(keys::rate, KnobType::number, "50",
                          "traffic: mean arrivals (Poisson) per second of virtual time, or per E2E alone (rate_unit)");
    rate.min = min_arrival_rate, rate.max = 1e6;
    rate.slider_min = 0.1, rate.slider_max = 500;
    knobs.push_back(rate);
    knobs.push_back(lab::choice(keys::rate_unit, {"req/s", "alone"},
                                "traffic: the rate in requests per second, or per E2E (arrival to last token) of the "
                                "first request served alone to max_tokens on this machine (measured first, median of "
                                "5 runs)"));
    Knob batch = lab::whole(keys::max_batch, 1, 1024, d.scheduler.max_batch, "", "traffic: most requests running at once");
    batch.slider_min = 1, batch.slider_max = 64;
    knobs.push_back(batch);
    knobs.push_back(lab::whole(keys::kv_blocks, 1, llm::max_kv_blocks, d.kv_blocks, "", "traffic: blocks in the KV pool"));
    knobs.push_back(lab::whole(keys::block_size, 1, llm::max_block_size, d.block_size, "tokens",
                               "traffic: positions per KV block"));
    knobs.push_back(lab::whole(keys::step_tokens, 1, 1 << 20, d.scheduler.max_step_tokens, "tokens",
                               "traffic, continuous: most tokens one forward pass reads"));
    knobs.push_back(lab::knob(keys::prefix_cache, KnobType::boolean, "false",
                              "traffic: reuse KV blocks of identical prompt prefixes (paged only)"));
    knobs.push_back(lab::choice(keys::kv_layout, {"paged", "contiguous"},
                                "traffic: KV blocks taken as a request grows, or its whole maximum length reserved up "
                                "front"));
    knobs.push_back(lab::whole(keys::shared_prefix, 0, 4096, 0, "tokens",
                               "traffic: tokens of a built-in system prompt in front of every prompt (0: none)"));
    knobs.push_back(lab::whole(keys::max_tokens, 1, 4096, 16, "tokens", "traffic: most tokens a request generates"));
    knobs.push_back(lab::whole(keys::min_tokens, 0, 4096, 0, "tokens", "traffic: fewest drawn (0: max_tokens / 4)"));
    knobs.push_back(lab::whole(keys::seed, 0, 2147483647, 1, "", "traffic: seed of the arrivals, prompts and lengths"));
    knobs.push_back(lab::number(keys::ttft_target, 0, 1e6, 0, "",
                                "traffic, goodput: a request meets it when its TTFT from arrival (first token − "
                                "arrival, queue included, as vLLM bench) is at most this, in target_unit (0: no target)"));
    knobs.push_back(lab::number(keys::tpot_target, 0, 1e6, 0, "",
                                "traffic, goodput: … and its TPOT ((E2E − TTFT) ÷ (output tokens − 1), as vLLM; a "
                                "one-token request meets it) at most this, in target_unit (0: no target)"));
    knobs.push_back(lab::choice(keys::target_unit, {"ms", "alone"},
                                "traffic: the targets in milliseconds, or as multiples of the TTFT and TPOT of the "
                                "first request served alone on this machine (measured first, median of 5 runs)"));

    const Stage rq = Stage::request, fw = Stage::forward, op = Stage::output, pp = Stage::postprocess;
    std::vector<PathInfo> p = {
        {path(rq, keys::requests), VT::number, "", "traffic: requests in the workload"},
        {path(rq, keys::rate), VT::number, "", "traffic: mean arrival rate, in rate_unit"},
        {path(rq, keys::rate_unit), VT::text, "",
         "traffic: the rate's unit: \"req/s\", or \"alone\" (arrivals per E2E of the first request served alone to "
         "max_tokens)"},
        {path(rq, keys::policy), VT::text, "", "traffic: the batching policy"},
        {path(rq, keys::compare), VT::text, "", "traffic: what the baseline changes (none: no baseline)"},
        {path(rq, keys::baseline), VT::text, "", "traffic with compare: the baseline's setting (\"static\", …)"},
        {path(rq, keys::shared_prefix), VT::number, "tokens", "traffic: shared system-prompt tokens"},
        {path(fw, keys::passes), VT::number, "", "traffic: forward passes run, baseline included"},
        {path(fw, keys::engine_ms), VT::number, "ms", "traffic: engine time of those passes (forward + sampling), measured"},
        {path(fw, keys::cpu_wait_ms), VT::number, "ms",
         "traffic, batch_sweep: of the passes timed, the engine's thread waited for a CPU (the OS ran another "
         "program; Linux's run delay): left out of the virtual clock and of every step's time"},
        {path(fw, keys::virtual_s), VT::number, "s", "traffic: virtual time of the run, first arrival to last token"},
        {path(fw, keys::ttft_target_ms), VT::number, "ms", "traffic with a TTFT target: the target, in ms (both runs)"},
        {path(fw, keys::tpot_target_ms), VT::number, "ms", "traffic with a TPOT target: the target, in ms (both runs)"},
        {path(fw, keys::ttft_alone_ms), VT::number, "ms",
         "traffic, target_unit or rate_unit alone: TTFT of the first request served alone (median of 5), the TTFT "
         "target's unit"},
        {path(fw, keys::tpot_alone_ms), VT::number, "ms",
         "traffic, target_unit or rate_unit alone: TPOT of the first request served alone (median of 5), the TPOT "
         "target's unit"},
        {path(fw, keys::e2e_alone_ms), VT::number, "ms",
         "traffic, target_unit or rate_unit alone: E2E of the first request served alone to max_tokens (median of 5), "
         "the rate's unit"},
        {path(fw, keys::rate_req_s), VT::number, "req/s", "traffic: the mean arrival rate in requests per second"},
    };
    for (const TrafficFigure& f : traffic_figures()) {
        const char* with = f.needs_target ? " and a target" : "";
        p.push_back({path(op, f.key), VT::number, f.unit,
                     fmt::format("traffic{}: {}", f.needs_target ? " with a target" : "", f.meaning)});
        p.push_back({path(op, (std::string(keys::baseline_prefix) + f.key).c_str()), VT::number, f.unit,
                     fmt::format("traffic with compare{}, the baseline: {}", with, f.meaning)});
        if (f.ratio)
            p.push_back({path(pp, f.ratio), VT::number, "",
                         fmt::format("traffic with compare{}: {} of this run ÷ of the baseline{}", with, f.key,
                                     f.needs_target ? " (not given when the baseline met no target: 0)" : "")});
    }
    p.push_back({path(pp, decode_after_prefill), VT::number, "ms",
                 "traffic with compare: prefix_cache: median cost of a decode-only pass right after a pass with prompt "
                 "rows"});
    p.push_back({path(pp, baseline_decode_after_prefill), VT::number, "ms",
                 "traffic with compare: prefix_cache: the same in the baseline"});
    p.push_back({path(pp, decode_later), VT::number, "ms",
                 "traffic with compare: prefix_cache: median cost of the other decode-only passes"});
    p.push_back({path(pp, baseline_decode_later), VT::number, "ms",
                 "traffic with compare: prefix_cache: the same in the baseline"});
    p.push_back({path(pp, outputs_identical), VT::text, "",
                 "traffic with compare: \"yes\" when every request generated the same tokens in both runs, else "
                 "\"n of m differ\""});
    paths.insert(paths.end(), p.begin(), p.end());
}

std::vector<std::string> traffic_compares_answering(std::string_view asked) {
    using lab::path;
    const std::string p(asked);
    for (const char* key : {decode_after_prefill, baseline_decode_after_prefill, decode_later, baseline_decode_later})
        if (p == path(Stage::postprocess, key)) return {"prefix_cache"};
    bool baseline = p == path(Stage::request, keys::baseline) || p == path(Stage::postprocess, outputs_identical);
    for (const TrafficFigure& f : traffic_figures())
        baseline = baseline || p == path(Stage::output, (std::string(keys::baseline_prefix) + f.key).c_str()) ||
                   (f.ratio && p == path(Stage::postprocess, f.ratio));
    if (!baseline) return {};
    return {std::begin(compared_things), std::end(compared_things)};
}

}  // namespace sixstep::serving
