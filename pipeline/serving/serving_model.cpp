#include "pipeline/serving/serving_model.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"

namespace sixstep::serving {

namespace {

using Clock = std::chrono::steady_clock;

double p50(const TrafficReport& r, const char* key) { return r.latency(key).summary.p50; }

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
         [](const TrafficReport& r) { return p50(r, "tpot"); }},
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
    };
    return all;
}

namespace {

using Fields = LabFields;

class ServingJob : public Job {
public:
    ServingJob(ServingModel& model, Request request) : model_(model), request_(std::move(request)) {}

    void normalize(TraceEvent& ev) override {
        fields_ = Fields(request_);
        ex_ = std::make_shared<ServingExhibit>();
        ex_->experiment = fields_.text(keys::experiment);
        ev.in(keys::experiment, ex_->experiment);
        lab_ = make_lab_experiment(ex_->experiment);
        if (lab_) lab_->read(fields_, ev);
        else if (ex_->experiment == "batch_sweep") read_sweep(ev);
        else if (ex_->experiment == "queue") read_queue(ev);
        else read_traffic(ev);
    }

    void forward(TraceEvent& ev) override {
        const auto t0 = Clock::now();
        if (lab_) lab_->run(model_, *ex_, ev);
        else if (ex_->experiment == "batch_sweep") run_sweep(ev);
        else if (ex_->experiment == "queue") run_queue(ev);
        else run_traffic_experiment(ev);
        ev.out(keys::wall_ms, ms_since(t0), "ms", "real time");
        model_.set_exhibit(ex_);
    }

    void output(TraceEvent& ev) override {
        if (lab_) lab_->output(*ex_, ev);
        else if (ex_->sweep) output_sweep(ev);
        else if (ex_->queue) output_queue(ev);
        else output_traffic(ev);
    }

    bool postprocess(TraceEvent& ev) override {
        if (lab_) answer_ = lab_->compare(*ex_, ev);
        else if (ex_->sweep) compare_sweep(ev);
        else if (ex_->queue) compare_queue(ev);
        else compare_traffic(ev);
        return false;
    }

    Response respond(TraceEvent& ev) override {
        ev.summary = "the experiment in words";
        ev.out(sixstep::keys::text, answer_);
        Response r;
        r.text = answer_;
        r.engine_words = true;
        return r;
    }

private:
    // ---- batch sweep ----------------------------------------------------------
    void read_sweep(TraceEvent& ev) {
        sweep_.batch_sizes.clear();  // the params' default list is not this request's
        for (double b : number_list(fields_.text(keys::batch_sizes), keys::batch_sizes)) {
            if (b != std::floor(b) || b < 1 || b > 4096)
                throw Error(fmt::format("\"batch_sizes\": {} is not a batch size (whole, 1 to 4096)", format_value(Value{b})));
            sweep_.batch_sizes.push_back(static_cast<int>(b));
        }
        sweep_.n_context = fields_.whole(keys::context);
        sweep_.n_steps = fields_.whole(keys::steps);
        sweep_.repetitions = fields_.whole(keys::repetitions);
        ev.summary = fmt::format("a batch sweep over {} batch sizes, {} decode steps each at a {}-token context",
                                 sweep_.batch_sizes.size(), sweep_.n_steps, sweep_.n_context);
        ev.out(keys::batch_sizes, std::vector<double>(sweep_.batch_sizes.begin(), sweep_.batch_sizes.end()));
    }

    void run_sweep(TraceEvent& ev) {
        ex_->sweep = run_batch_sweep(model_.llm().backend(), sweep_);
        ev.summary = fmt::format("{} batch sizes × {} runs of {} decode steps", sweep_.batch_sizes.size(),
                                 sweep_.repetitions, sweep_.n_steps);
    }

    void output_sweep(TraceEvent& ev) {
        const BatchSweepResult& r = *ex_->sweep;
        std::vector<double> b, tps, ms, sp, tr, kv;
        for (const BatchSweepPoint& p : r.points) {
            b.push_back(p.n_batch), tps.push_back(p.tokens_per_s), ms.push_back(p.step_ms);
            sp.push_back(p.speedup), tr.push_back(p.tpot_ratio), kv.push_back(p.cost.kv_bytes);
            ev.says(fmt::format("batch {:>4}: {:8.1f} tok/s, step {:.3f} ms, {:.2f}× the first", p.n_batch,
                                p.tokens_per_s, p.step_ms, p.speedup));
        }
        ev.out(keys::batch_sizes, b);
        ev.out(keys::tokens_per_s, tps, "tok/s");
        ev.out(keys::step_ms, ms, "ms", "TPOT");
        ev.out(keys::speedup, sp);
        ev.out(keys::tpot_ratio, tr);
        ev.out(keys::knee, yes_no(r.knee.found));
        ev.out(keys::knee_batch, r.knee.found ? r.knee.x : 0.0);
        ev.out(keys::knee_verdict, r.knee.verdict);
        ev.out(keys::weight_bytes, static_cast<double>(r.shape.weight_bytes), "B");
        ev.out(keys::kv_bytes, kv, "B");
        ev.summary = r.knee.verdict;
    }

    void compare_sweep(TraceEvent& ev) {
        const BatchSweepResult& r = *ex_->sweep;
        const BatchSweepPoint& first = r.points.front();
        const BatchSweepPoint& last = r.points.back();
        ev.out(keys::largest_batch, static_cast<double>(last.n_batch));
        ev.out(keys::speedup_at_largest, last.speedup);
        ev.out(keys::tpot_ratio_at_largest, last.tpot_ratio);
        // The cache a step reads grows with batch × context; the weights do not.
        const double kv_share = r.shape.weight_bytes > 0 ? last.cost.kv_bytes / r.shape.weight_bytes : 0.0;
        ev.out(keys::kv_to_weights_at_largest, kv_share);
        ev.says(fmt::format("KV cache read per step at batch {} = {} sequences × {} positions × {} B = {} = {}× the "
                            "weights ({})",
                            last.n_batch, last.n_batch, format_value(Value{r.mean_context}, 3),
                            with_commas(r.shape.kv_bytes_per_token), bytes_decimal(last.cost.kv_bytes),
                            format_value(Value{kv_share}, 3), bytes_decimal(static_cast<double>(r.shape.weight_bytes))));
        // What a doubling of the batch buys, on average over the first
        // quarter of the sweep (its smallest sizes) and over the last: past
        // the knee, little. Over quarters, not single steps: one step's gain
        // moves by a third from run to run on a busy machine. Not over
        // halves: the kernels change path with the batch (one-row dots,
        // several-row tiles, then the GEMM from 24 tokens at AVX-512), so
        // the middle of a 1-128 sweep can gain again after a lull, and on an
        // AMD Zen 5 the halves came out alike (1→16 1.27-1.37× a doubling,
        // 16→128 1.33-1.37×; quarters 1.45-1.63× against 1.15-1.20×).
        const std::size_t n = r.points.size(), q = std::max<std::size_t>(1, n / 4);
        const auto per_doubling = [&](std::size_t i, std::size_t j) {
            const BatchSweepPoint &a = r.points[i], &b = r.points[j];
            const double doublings = std::log2(static_cast<double>(b.n_batch) / a.n_batch);
            return a.tokens_per_s > 0 && doublings > 0 ? std::pow(b.tokens_per_s / a.tokens_per_s, 1 / doublings) : 0.0;
        };
        const bool enough = n >= 3;
        const double g_first = enough ? per_doubling(0, q) : 0.0, g_last = enough ? per_doubling(n - 1 - q, n - 1) : 0.0;
        ev.out(keys::gain_per_doubling_first_quarter, g_first);
        ev.out(keys::gain_per_doubling_last_quarter, g_last);
        if (enough)
            ev.says(fmt::format("tokens/s gained per doubling of the batch: {:.2f}× from {} to {}, {:.2f}× from {} to {}",
                                g_first, r.points[0].n_batch, r.points[q].n_batch, g_last, r.points[n - 1 - q].n_batch,
                                r.points[n - 1].n_batch));
        ev.says(fmt::format("throughput at batch {} ÷ batch {} = {:.1f} ÷ {:.1f} = {:.2f}×", last.n_batch,
                            first.n_batch, last.tokens_per_s, first.tokens_per_s, last.speedup));
        ev.says(fmt::format("TPOT at batch {} ÷ batch {} = {:.3f} ÷ {:.3f} ms = {:.2f}×", last.n_batch, first.n_batch,
                            last.step_ms, first.step_ms, last.tpot_ratio));
        std::string verdict = r.knee.verdict;  // a sentence of its own here: "No knee: …", "Knee at x = …"
        if (!verdict.empty()) verdict.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(verdict.front())));
        answer_ = fmt::format("{} sequences per step gave {:.1f}× the tokens/s of {} while each token took {:.1f}× as "
                              "long. {}",
                              last.n_batch, last.speedup, first.n_batch, last.tpot_ratio, verdict);
    }

    // ---- traffic --------------------------------------------------------------
    void read_traffic(TraceEvent& ev) {
        TrafficParams& p = traffic_;
        p.workload.arrivals.kind = ArrivalKind::poisson;
        p.workload.arrivals.rate = fields_.number(keys::rate);
        p.workload.arrivals.count = fields_.whole(keys::requests);
        p.workload.arrivals.seed = static_cast<std::uint64_t>(fields_.whole(keys::seed));
        p.workload.max_tokens = fields_.whole(keys::max_tokens);
        p.workload.min_tokens = fields_.whole(keys::min_tokens);
        if (p.workload.min_tokens > p.workload.max_tokens)
            throw Error(fmt::format("\"min_tokens\" {} is above \"max_tokens\" {}", p.workload.min_tokens,
                                    p.workload.max_tokens));
        p.workload.shared_prefix = fields_.whole(keys::shared_prefix);
        p.scheduler.policy = *parse_batch_policy(fields_.text(keys::policy));
        p.scheduler.max_batch = fields_.whole(keys::max_batch);
        p.scheduler.max_step_tokens = fields_.whole(keys::step_tokens);
        p.scheduler.prefix_cache = fields_.on(keys::prefix_cache);
        p.scheduler.kv_layout = fields_.text(keys::kv_layout) == "contiguous" ? KvLayout::contiguous : KvLayout::paged;
        p.kv_blocks = fields_.whole(keys::kv_blocks);
        p.block_size = fields_.whole(keys::block_size);
        if (p.scheduler.prefix_cache && p.scheduler.kv_layout == KvLayout::contiguous)
            throw Error("\"prefix_cache\" needs the paged KV layout: cached blocks are shared pages");
        compare_ = fields_.text(keys::compare);
        ex_->compare = compare_ == "none" ? std::string() : compare_;
        base_ = p;
        if (compare_ == "policy") {
            base_.scheduler.policy = p.scheduler.policy == BatchPolicy::continuous ? BatchPolicy::static_batching
                                                                                   : BatchPolicy::continuous;
            ex_->run_label = std::string(batch_policy_name(p.scheduler.policy));
            ex_->baseline_label = std::string(batch_policy_name(base_.scheduler.policy));
        } else if (compare_ == "prefix_cache") {
            if (p.scheduler.kv_layout == KvLayout::contiguous)
                throw Error("compare: prefix_cache needs the paged KV layout");
            base_.scheduler.prefix_cache = !p.scheduler.prefix_cache;
            ex_->run_label = fmt::format("prefix cache {}", p.scheduler.prefix_cache ? "on" : "off");
            ex_->baseline_label = fmt::format("prefix cache {}", base_.scheduler.prefix_cache ? "on" : "off");
        } else if (compare_ == "kv_layout") {
            if (p.scheduler.prefix_cache) throw Error("compare: kv_layout runs without the prefix cache (it needs pages)");
            base_.scheduler.kv_layout = p.scheduler.kv_layout == KvLayout::paged ? KvLayout::contiguous : KvLayout::paged;
            ex_->run_label = std::string(kv_layout_name(p.scheduler.kv_layout));
            ex_->baseline_label = std::string(kv_layout_name(base_.scheduler.kv_layout));
        }
        ev.summary = fmt::format("{} requests at {} req/s, {} batching{}", p.workload.arrivals.count,
                                 format_value(Value{p.workload.arrivals.rate}), batch_policy_name(p.scheduler.policy),
                                 compare_ == "none" ? "" : fmt::format(", compared with {}", ex_->baseline_label));
        ev.out(keys::requests, static_cast<double>(p.workload.arrivals.count));
        ev.out(keys::rate, p.workload.arrivals.rate, "req/s");
        ev.out(keys::policy, std::string(batch_policy_name(p.scheduler.policy)));
        ev.out(keys::shared_prefix, static_cast<double>(p.workload.shared_prefix), "tokens");
        ev.out(keys::compare, compare_);
        if (compare_ != "none") ev.out(keys::baseline, ex_->baseline_label);
    }

    void run_traffic_experiment(TraceEvent& ev) {
        llm::LlmModel& m = model_.llm();
        const int bos = m.vocab().add_bos() ? m.vocab().bos() : -1;
        const std::vector<RequestSpec> reqs = make_workload(traffic_.workload, m.codec(), bos);
        ex_->run = run_traffic(m.backend(), m.codec(), reqs, traffic_);
        if (compare_ != "none") ex_->baseline = run_traffic(m.backend(), m.codec(), reqs, base_);
        double passes = 0, engine = 0;
        for (const TrafficRun* r : {&*ex_->run, ex_->baseline ? &*ex_->baseline : nullptr}) {
            if (!r) continue;
            passes += static_cast<double>(r->steps.size());
            for (const StepRecord& s : r->steps) engine += s.shape.forward_ms + s.shape.sample_ms;
        }
        ev.summary = fmt::format("{} forward passes{}", passes, ex_->baseline ? " (both runs)" : "");
        ev.out(keys::passes, passes);
        ev.out(keys::engine_ms, engine, "ms");
        ev.out(keys::virtual_s, ex_->run->info.duration_ms / 1000.0, "s");
    }

    void output_traffic(TraceEvent& ev) {
        for (const TrafficFigure& f : traffic_figures()) {
            ev.out(f.key, f.get(ex_->run->report), f.unit);
            if (ex_->baseline)
                ev.out(std::string(keys::baseline_prefix) + f.key, f.get(ex_->baseline->report), f.unit);
        }
        const TrafficReport& r = ex_->run->report;
        ev.summary = fmt::format("p50 TTFT {:.1f} ms, p50 TPOT {:.2f} ms, {:.0f} tok/s", p50(r, "ttft"), p50(r, "tpot"),
                                 r.total("output_throughput").value);
    }

    void compare_traffic(TraceEvent& ev) {
        const TrafficReport& r = ex_->run->report;
        if (!ex_->baseline) {
            ev.summary = "no baseline (compare: none)";
            answer_ = fmt::format("{} requests served in {:.2f} s of virtual time: median TTFT {:.1f} ms, median TPOT "
                                  "{:.2f} ms, {:.0f} output tokens/s.",
                                  ex_->run->requests.size(), r.total("duration").value, p50(r, "ttft"), p50(r, "tpot"),
                                  r.total("output_throughput").value);
            return;
        }
        const TrafficReport& b = ex_->baseline->report;
        // The same requests in both arms (arrival order): a scheduling or
        // caching choice must not change what any of them generates.
        const std::vector<RequestRecord>& ra = ex_->run->requests;
        const std::vector<RequestRecord>& rb = ex_->baseline->requests;
        std::size_t differ = 0;
        if (ra.size() != rb.size()) differ = std::max(ra.size(), rb.size());
        else
            for (std::size_t i = 0; i < ra.size(); ++i) differ += ra[i].output != rb[i].output;
        ev.out("outputs_identical", differ == 0 ? std::string("yes") : fmt::format("{} of {} differ", differ, ra.size()));
        for (const TrafficFigure& f : traffic_figures()) {
            if (!f.ratio) continue;
            const double x = f.get(r), y = f.get(b);
            if (y == 0) continue;  // no ratio to a zero
            ev.out(f.ratio, x / y);
            ev.says(fmt::format("{}: {} {} ÷ {} {} = {:.3f}", f.key, ex_->run_label, format_value(Value{x}, 4),
                                ex_->baseline_label, format_value(Value{y}, 4), x / y));  // 16610, not 1.661e+04
        }
        const double t = p50(r, "ttft"), tb = p50(b, "ttft");
        ev.summary = fmt::format("{} vs {}: median TTFT × {:.2f}", ex_->run_label, ex_->baseline_label, t / tb);
        // TTFT from arrival (the queue included), and TPOT beside it: what
        // one side gains in waiting it may pay for in typing speed.
        answer_ = fmt::format("Same arrivals, {} vs {}: median TTFT {:.1f} vs {:.1f} ms (from arrival), median TPOT "
                              "{} vs {} ms, requests running at once at most {} vs {}, {:.0f} vs {:.0f} output "
                              "tokens/s.",
                              ex_->run_label, ex_->baseline_label, t, tb, format_value(Value{p50(r, "tpot")}, 3),
                              format_value(Value{p50(b, "tpot")}, 3), r.total("running_peak").value,
                              b.total("running_peak").value, r.total("output_throughput").value,
                              b.total("output_throughput").value);
    }

    // ---- queue ------------------------------------------------------------------
    void read_queue(TraceEvent& ev) {
        queue_.utilizations = number_list(fields_.text(keys::utilizations), keys::utilizations);
        queue_.min_requests = fields_.whole(keys::sim_requests);
        utilization_ = fields_.number(keys::utilization);
        samples_ = fields_.whole(keys::samples);
        context_ = fields_.whole(keys::context);
        // Every check before any work: a utilization of 1 says why it diverges.
        queue_.mean_service_ms = 1;
        validate_queue_curve(queue_);
        ev.summary = fmt::format("one server, Poisson arrivals, {} utilizations; service = one decode step, measured",
                                 queue_.utilizations.size());
        ev.out(keys::utilizations, queue_.utilizations);
        ev.out(keys::utilization, utilization_);
    }

    void run_queue(TraceEvent& ev) {
        queue_.service_samples_ms = measure_decode_steps(model_.llm().backend(), 1, context_, samples_);
        ex_->queue = run_queue_curve(queue_);
        QueueSimParams at;
        at.utilization = utilization_;
        at.service = ServiceModel::empirical;
        at.service_samples_ms = queue_.service_samples_ms;
        at.min_requests = queue_.min_requests;
        ex_->at_utilization = simulate_queue(at);
        ex_->utilization = utilization_;
        ev.summary = fmt::format("{} decode steps timed (mean {:.3f} ms), {} simulations", samples_,
                                 ex_->queue->mean_service_ms, ex_->queue->points.size() * 3 + 1);
        ev.out(keys::service_ms, ex_->queue->mean_service_ms, "ms");
        ev.out(keys::service_scv, ex_->queue->service_scv);
    }

    void output_queue(TraceEvent& ev) {
        const QueueCurve& c = *ex_->queue;
        std::vector<double> u, md, mdf, mm, mmf, mg, mgf;
        for (const QueuePoint& p : c.points) {
            u.push_back(p.utilization);
            md.push_back(p.deterministic.mean_wait_ms), mdf.push_back(p.md1_ms);
            mm.push_back(p.exponential.mean_wait_ms), mmf.push_back(p.mm1_ms);
            mg.push_back(p.empirical->mean_wait_ms), mgf.push_back(p.mg1_ms);
            ev.says(fmt::format("ρ = {:.2f}: wait {:.3f} ms simulated (M/D/1), formula {:.3f}; M/M/1 {:.3f} vs {:.3f}",
                                p.utilization, p.deterministic.mean_wait_ms, p.md1_ms, p.exponential.mean_wait_ms,
                                p.mm1_ms));
        }
        ev.out(keys::utilizations, u);
        ev.out(keys::wait_md1_sim_ms, md, "ms");
        ev.out(keys::wait_md1_ms, mdf, "ms");
        ev.out(keys::wait_mm1_sim_ms, mm, "ms");
        ev.out(keys::wait_mm1_ms, mmf, "ms");
        ev.out(keys::wait_measured_sim_ms, mg, "ms");
        ev.out(keys::wait_measured_ms, mgf, "ms");
        const double formula = wait_mg1(utilization_, c.mean_service_ms, c.service_scv);
        ev.out(keys::wait_at_utilization_ms, ex_->at_utilization.mean_wait_ms, "ms");
        ev.out(keys::formula_at_utilization_ms, formula, "ms");
        ev.out(keys::wait_at_utilization_services, ex_->at_utilization.mean_wait_ms / c.mean_service_ms);
        ev.summary = fmt::format("at ρ = {:.2f} a request waits {:.3f} ms (± {:.3f}) for a {:.3f} ms service",
                                 utilization_, ex_->at_utilization.mean_wait_ms, ex_->at_utilization.ci95_ms,
                                 c.mean_service_ms);
    }

    void compare_queue(TraceEvent& ev) {
        const QueueCurve& c = *ex_->queue;
        const QueuePoint& lo = c.points.front();
        const QueuePoint& hi = c.points.back();
        const double growth = hi.deterministic.mean_wait_ms / lo.deterministic.mean_wait_ms;
        bool rising = true;
        double max_z = 0;
        for (std::size_t i = 0; i < c.points.size(); ++i) {
            const QueuePoint& p = c.points[i];
            if (i > 0 && p.deterministic.mean_wait_ms <= c.points[i - 1].deterministic.mean_wait_ms) rising = false;
            // The two service laws of the closed forms; the measured steps' law
            // (heavy tails on a busy machine) is drawn with its intervals instead.
            for (const auto& [sim, formula] : {std::pair{&p.deterministic, p.md1_ms}, std::pair{&p.exponential, p.mm1_ms}})
                if (sim->std_error_ms > 0) max_z = std::max(max_z, std::fabs(sim->mean_wait_ms - formula) / sim->std_error_ms);
        }
        const double headroom = max_utilization_for_wait(1, c.service_scv);
        ev.out(keys::wait_growth, growth);
        ev.out(keys::waits_rising, yes_no(rising));
        ev.out(keys::max_z, max_z);
        ev.out(keys::headroom_utilization, headroom);
        ev.says(fmt::format("wait at ρ = {:.2f} ÷ wait at ρ = {:.2f} = {:.3f} ÷ {:.3f} ms = {:.1f}×", hi.utilization,
                            lo.utilization, hi.deterministic.mean_wait_ms, lo.deterministic.mean_wait_ms, growth));
        ev.says(fmt::format("mean wait ≤ one service time while ρ(1 + c²) / (2(1 − ρ)) ≤ 1: ρ ≤ {:.3f} (c² = {:.3f})",
                            headroom, c.service_scv));
        answer_ = fmt::format("From {:.0f}% to {:.0f}% busy the mean wait grew {:.0f}×; at {:.0f}% a request waits "
                              "{:.3f} ms for a {:.3f} ms service. To wait no longer than one service, stay under {:.0f}% "
                              "busy.",
                              100 * lo.utilization, 100 * hi.utilization, growth, 100 * utilization_,
                              ex_->at_utilization.mean_wait_ms, c.mean_service_ms, 100 * headroom);
    }

    ServingModel& model_;
    Request request_;
    Fields fields_;
    std::unique_ptr<LabExperiment> lab_;  // the later experiments (serving_lab.h); null for the first three
    std::shared_ptr<ServingExhibit> ex_;
    std::string answer_;
    BatchSweepParams sweep_;
    TrafficParams traffic_, base_;
    std::string compare_ = "none";
    QueueCurveParams queue_;
    double utilization_ = 0;
    int samples_ = 0, context_ = 0;
};

}  // namespace

ServingModel::ServingModel(ServingModelParams params) {
    llm::LlmModelParams p;
    p.n_threads = params.n_threads;
    p.backend = params.backend;
    llm_ = std::make_unique<llm::LlmModel>(std::move(params.file), p);
}
ServingModel::~ServingModel() = default;

std::string ServingModel::name() const { return "serving: " + llm_->name(); }
bool ServingModel::loaded() const { return llm_->loaded(); }
void ServingModel::load(TraceEvent& ev) { llm_->load(ev); }
std::uint64_t ServingModel::weights_checksum() const { return llm_->weights_checksum(); }

std::unique_ptr<Job> ServingModel::start(const Request& request) {
    exhibit_.reset();  // the panels show this request's experiment once it has run
    return std::make_unique<ServingJob>(*this, request);
}

}  // namespace sixstep::serving
