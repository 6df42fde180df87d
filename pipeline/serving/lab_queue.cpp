// The serving lab's queue (lesson 09): one server, Poisson arrivals, service
// times measured as decode steps on the engine; the mean wait against
// utilization, simulated beside M/D/1, M/M/1 and Pollaczek–Khinchine
// (queue_curve.h, queue_sim.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/batch_sweep.h"
#include "pipeline/serving/queue_sim.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

namespace {

// "0.1,0.5,0.9" → the curve's utilizations, ascending, each one a queue can
// be simulated at; throws sixstep::Error.
std::vector<double> utilizations_of(const std::string& text) {
    QueueCurveParams curve;
    curve.utilizations = number_list(text, keys::utilizations);
    curve.mean_service_ms = 1;  // any: the utilizations are checked, not the service
    validate_queue_curve(curve);
    return curve.utilizations;
}

class QueueLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        curve_.utilizations = utilizations_of(f.text(keys::utilizations));
        curve_.min_requests = f.whole(keys::sim_requests);
        utilization_ = f.number(keys::utilization);
        samples_ = f.whole(keys::samples);
        context_ = f.whole(keys::context);
        // Every check before any work: a utilization of 1 says why it diverges.
        curve_.mean_service_ms = 1;
        validate_queue_curve(curve_);
        ev.summary = fmt::format("one server, Poisson arrivals, {} utilizations; service = one decode step, measured",
                                 curve_.utilizations.size());
        ev.out(keys::utilizations, curve_.utilizations);
        ev.out(keys::utilization, utilization_);
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        curve_.service_samples_ms = measure_decode_steps(model.llm().backend(), 1, context_, samples_);
        ex.queue = run_queue_curve(curve_);
        QueueSimParams at;
        at.utilization = utilization_;
        at.service = ServiceModel::empirical;
        at.service_samples_ms = curve_.service_samples_ms;
        at.min_requests = curve_.min_requests;
        ex.at_utilization = simulate_queue(at);
        ex.utilization = utilization_;
        ev.summary = fmt::format("{} decode steps timed (mean {:.3f} ms), {} simulations", samples_,
                                 ex.queue->mean_service_ms, ex.queue->points.size() * 3 + 1);
        ev.out(keys::service_ms, ex.queue->mean_service_ms, "ms");
        ev.out(keys::service_scv, ex.queue->service_scv);
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const QueueCurve& c = *ex.queue;
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
        ev.out(keys::wait_at_utilization_ms, ex.at_utilization.mean_wait_ms, "ms");
        ev.out(keys::formula_at_utilization_ms, formula, "ms");
        ev.out(keys::wait_at_utilization_services, ex.at_utilization.mean_wait_ms / c.mean_service_ms);
        ev.summary = fmt::format("at ρ = {:.2f} a request waits {:.3f} ms (± {:.3f}) for a {:.3f} ms service",
                                 utilization_, ex.at_utilization.mean_wait_ms, ex.at_utilization.ci95_ms,
                                 c.mean_service_ms);
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const QueueCurve& c = *ex.queue;
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
        // Near ρ = 1 the queue needs more requests to settle than the run
        // had: the mean is how long it ran, not the wait (0.9999999 read
        // 1,000 ms against a formula of 640,000, without a word). The CLI
        // says so under its table; the lesson, as a warning.
        const int n_short = unsettled_simulations(c) + !ex.at_utilization.batches_long_enough;
        if (n_short > 0)
            ev.warnings.push_back(fmt::format(
                "{} of the simulations reached their cap of requests before the queue settled: their means and "
                "intervals are not to be trusted (a utilization further from 1)",
                n_short));
        const double headroom = max_utilization_for_wait(1, c.service_scv);
        ev.out(keys::wait_growth, growth);
        ev.out(keys::waits_rising, yes_no(rising));
        ev.out(keys::max_z, max_z);
        ev.out(keys::headroom_utilization, headroom);
        // Four significant digits each: the low wait is a few µs, and fixed
        // decimals printed a division its own figures did not give.
        ev.says(fmt::format("wait at ρ = {:.2f} ÷ wait at ρ = {:.2f} = {} ÷ {} ms = {:.3g}×", hi.utilization,
                            lo.utilization, format_value(Value{hi.deterministic.mean_wait_ms}, 4),
                            format_value(Value{lo.deterministic.mean_wait_ms}, 4), growth));
        ev.says(fmt::format("mean wait ≤ one service time while ρ(1 + c²) / (2(1 − ρ)) ≤ 1: ρ ≤ {:.3f} (c² = {:.3f})",
                            headroom, c.service_scv));
        // One utilization has no growth to tell ("from 50% to 50% busy the
        // mean wait grew 1×").
        const std::string grew =
            c.points.size() > 1 ? fmt::format("From {}% to {}% busy the mean wait grew {:.0f}×; at {}%",
                                              busy_percent(lo.utilization), busy_percent(hi.utilization), growth,
                                              busy_percent(utilization_))
                                : fmt::format("At {}% busy", busy_percent(utilization_));
        return fmt::format("{} a request waits {:.3f} ms for a {:.3f} ms service. To wait no longer than one service, "
                           "stay under {:.0f}% busy.",
                           grew, ex.at_utilization.mean_wait_ms, c.mean_service_ms, 100 * headroom);
    }

private:
    QueueCurveParams curve_;
    double utilization_ = 0;
    int samples_ = 0, context_ = 0;
};

}  // namespace

std::unique_ptr<LabExperiment> make_queue_lab() { return std::make_unique<QueueLab>(); }

// Counted at its most: samples + 1 decode steps timed after the context,
// and three service laws simulated per utilization plus the one looked at.
Work queue_lab_work(const FieldLookup& field) {
    Work w;
    w.forward_tokens = lab::whole_field(field, keys::context) + lab::whole_field(field, keys::samples) + 1;
    w.simulations = 3 * lab::list_length(field(keys::utilizations)) + 1;
    // And their requests, known before they run: near ρ = 1 a simulation
    // lengthens to 100 million (330 utilizations from 0.99 up fit 1,000
    // simulations and would have run for an hour and a half).
    QueueSimParams sim;
    sim.min_requests = lab::whole_field(field, keys::sim_requests);
    std::vector<double> utilizations;
    try {
        utilizations = number_list(field(keys::utilizations), keys::utilizations);
    } catch (const Error&) {
        // Refused with its own message before any simulation runs.
    }
    for (const double u : utilizations) {
        sim.utilization = u;
        w.simulated_requests += 3 * queue_requests_planned(sim);
    }
    sim.utilization = std::strtod(field(keys::utilization).c_str(), nullptr);
    w.simulated_requests += queue_requests_planned(sim);
    return w;
}

// The context knob is the batch sweep's (declared there): the queue's
// service is one decode step at that context.
void declare_queue_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    Knob u = lab::knob(keys::utilization, KnobType::number, "0.9",
                       "queue: the load to look at, arrival rate × mean service time");
    u.min = min_utilization, u.max = 1, u.max_exclusive = true;
    u.slider_min = 0.05, u.slider_max = 0.99;
    knobs.push_back(u);
    Knob us = lab::knob(keys::utilizations, KnobType::text, "0.1,0.3,0.5,0.7,0.8,0.9,0.95",
                        "queue: the curve's utilizations, ascending, each strictly between 0 and 1");
    us.rule = [](const std::string& text) { (void)utilizations_of(text); };
    knobs.push_back(std::move(us));
    knobs.push_back(lab::whole(keys::samples, 1, 10000, 32, "", "queue: decode steps timed for the service-time distribution"));
    knobs.push_back(lab::whole(keys::sim_requests, 1000, 10'000'000, 20000, "", "queue: requests simulated per point at least"));
    const Stage rq = Stage::request, fw = Stage::forward, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, keys::utilizations), VT::numbers, "", "queue: the curve's utilizations"},
        {path(rq, keys::utilization), VT::number, "", "queue: the utilization looked at"},
        {path(fw, keys::service_ms), VT::number, "ms", "queue: mean measured decode step (the service time)"},
        {path(fw, keys::service_scv), VT::number, "", "queue: its squared coefficient of variation c²"},
        {path(op, keys::utilizations), VT::numbers, "", "queue: utilizations, ascending"},
        {path(op, keys::wait_md1_sim_ms), VT::numbers, "ms", "queue: mean wait simulated with every service = the mean (M/D/1)"},
        {path(op, keys::wait_md1_ms), VT::numbers, "ms", "queue: M/D/1 formula ρ/(2μ(1−ρ))"},
        {path(op, keys::wait_mm1_sim_ms), VT::numbers, "ms", "queue: mean wait simulated with exponential service (M/M/1)"},
        {path(op, keys::wait_mm1_ms), VT::numbers, "ms", "queue: M/M/1 formula ρ/(μ(1−ρ))"},
        {path(op, keys::wait_measured_sim_ms), VT::numbers, "ms", "queue: mean wait simulated with the measured service times"},
        {path(op, keys::wait_measured_ms), VT::numbers, "ms", "queue: Pollaczek–Khinchine with the measured c²"},
        {path(op, keys::wait_at_utilization_ms), VT::number, "ms",
         "queue: mean wait simulated at request.utilization with the measured service times"},
        {path(op, keys::formula_at_utilization_ms), VT::number, "ms", "queue: Pollaczek–Khinchine there"},
        {path(op, keys::wait_at_utilization_services), VT::number, "",
         "queue: that wait in mean service times (the same on any machine)"},
        {path(pp, keys::wait_growth), VT::number, "", "queue: simulated M/D/1 wait at the highest utilization ÷ at the lowest"},
        {path(pp, keys::waits_rising), VT::text, "", "queue: \"yes\" when every simulated wait exceeds the one before"},
        {path(pp, keys::max_z), VT::number, "",
         "queue: largest |simulated − formula| ÷ standard error, over every point, M/D/1 and M/M/1"},
        {path(pp, keys::headroom_utilization), VT::number, "",
         "queue: highest utilization keeping the mean wait within one service time (measured c²)"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
