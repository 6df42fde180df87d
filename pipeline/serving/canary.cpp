#include "pipeline/serving/canary.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "pipeline/core/data_dir.h"
#include "pipeline/core/error.h"
#include "pipeline/core/pipeline.h"
#include "pipeline/core/text.h"
#include "pipeline/delivery/delivery_model.h"
#include "pipeline/delivery/trainer.h"

namespace sixstep::serving {

using delivery::Example;
using delivery::n_features;

namespace {

// The checksum of a version's weights, as the serving model computes it once loaded.
std::uint64_t checksum_of(const delivery::Params& params) {
    delivery::DeliveryModel m(params);
    TraceEvent ev;
    m.load(ev);
    return m.weights_checksum();
}

void set_ranges(ModelVersion& v, const std::vector<Example>& data) {
    v.train_min.fill(INFINITY), v.train_max.fill(-INFINITY);
    v.label_min = INFINITY, v.label_max = -INFINITY;
    for (const Example& e : data) {
        for (int j = 0; j < n_features; ++j) {
            v.train_min[j] = std::min(v.train_min[j], e.x[j]);
            v.train_max[j] = std::max(v.train_max[j], e.x[j]);
        }
        v.label_min = std::min(v.label_min, e.minutes);
        v.label_max = std::max(v.label_max, e.minutes);
    }
}

double mse(const delivery::Params& p, const std::vector<Example>& data) {
    double sum = 0;
    for (const Example& e : data) {
        double y = p.bias;
        for (int j = 0; j < n_features; ++j) y += p.w[j] * e.x[j];
        sum += (y - e.minutes) * (y - e.minutes);
    }
    return sum / static_cast<double>(data.size());
}

std::string number(double x) { return fmt::format("{:.4g}", x); }

std::string requests(int n) { return count_of(static_cast<std::size_t>(n), "request", "requests"); }

void check_params(const CanaryParams& p) {
    if (!(p.fraction >= 0 && p.fraction <= 1))
        throw Error(fmt::format("canary fraction {}: give a share of traffic in [0, 1]", p.fraction));
    if (p.n_requests < 1 || p.n_requests > 1000000)
        throw Error(fmt::format("canary: {} requests: give 1..1,000,000", p.n_requests));
    if (p.baseline_requests < 0 || p.baseline_requests > p.n_requests)
        throw Error(fmt::format("canary: {} baseline requests: give 0..{} (the stream's length)", p.baseline_requests,
                                p.n_requests));
    if (p.v2_unit != "m" && p.v2_unit != "km")
        throw Error(fmt::format("canary: v2's distance unit \"{}\": give m or km", p.v2_unit));
    if (p.train_steps < 1 || p.train_steps > 100000)
        throw Error(fmt::format("canary: {} training steps: give 1..100,000", p.train_steps));
    if (p.min_samples < 1 || p.min_samples > 1000000)
        throw Error(fmt::format("canary: {} samples before judging: give 1..1,000,000", p.min_samples));
    if (!(p.mean_threshold > 0) || !std::isfinite(p.mean_threshold))
        throw Error(fmt::format("canary: mean threshold {}: give a finite share above 0", p.mean_threshold));
    if (!(p.range_threshold > 0) || !std::isfinite(p.range_threshold))
        throw Error(fmt::format("canary: out-of-range threshold {}: give a finite share above 0", p.range_threshold));
    if (p.promote_after < 0 || p.promote_after > 1000000)
        throw Error(fmt::format("canary: promote after {} answers: give 0..1,000,000", p.promote_after));
    if (p.window < 1 || p.window > 1000000) throw Error(fmt::format("canary: window of {} requests: give 1..1,000,000", p.window));
}

// The monitor's view of one answer: inputs outside the ranges this version
// was trained on, and an answer outside the minutes it ever saw.
std::vector<std::string> out_of_range(const ModelVersion& v, const std::array<double, n_features>& x, double minutes) {
    std::vector<std::string> w;
    for (int j = 0; j < n_features; ++j)
        if (x[j] < v.train_min[j] || x[j] > v.train_max[j])
            w.push_back(fmt::format("{} {} is outside {}'s training range {}–{}{}", delivery::features[j].name,
                                    number(x[j]), v.name, number(v.train_min[j]), number(v.train_max[j]),
                                    j == 0 ? " " + v.distance_unit : ""));
    if (minutes < v.label_min || minutes > v.label_max)
        w.push_back(fmt::format("{} minutes is outside the {}–{} minutes {} saw in training", number(minutes),
                                number(v.label_min), number(v.label_max), v.name));
    return w;
}

Request delivery_request(const std::string& distance, double congestion, int express) {
    Request r;
    r.set("distance", distance);
    r.set("congestion", number(congestion));
    r.set("express_lane", std::to_string(express));
    return r;
}

}  // namespace

ModelVersion fine_tuned_version(const std::string& name, const ModelVersion& from, std::vector<Example> data,
                                const std::string& distance_unit, int steps) {
    if (data.empty()) throw Error("fine-tuning needs at least one example");
    if (distance_unit != "m" && distance_unit != "km")
        throw Error(fmt::format("distance unit \"{}\": give m or km", distance_unit));
    if (distance_unit == "m")
        for (Example& e : data) e.x[0] *= 1000;
    // Gradient descent is stable below 2 ÷ the largest curvature; the trace
    // of the loss's Hessian, 2·mean(1 + Σ x²), bounds it whatever the units.
    double trace = 0;
    for (const Example& e : data) {
        double s = 1;
        for (double x : e.x) s += x * x;
        trace += 2 * s / static_cast<double>(data.size());
    }
    delivery::Trainer trainer(data, from.params, 1.0 / trace);
    for (int i = 0; i < steps; ++i) trainer.step();
    trainer.freeze();
    ModelVersion v;
    v.name = name;
    v.params = trainer.params();
    v.checksum = checksum_of(v.params);
    v.distance_unit = distance_unit;
    v.trained_on = fmt::format("{} fine-tuned for {} steps on {} deliveries, distance in {}", from.name, steps,
                               data.size(), distance_unit == "m" ? "metres" : "kilometres");
    v.train_steps = steps;
    v.train_loss = mse(v.params, data);
    set_ranges(v, data);
    return v;
}

ModelVersion article_version() {
    ModelVersion v;
    v.name = "v1";
    v.checksum = checksum_of(v.params);
    v.trained_on = "the article's weights (b = 5, w = 2, 10, −2)";
    const std::vector<Example> data = delivery::load_deliveries_csv(data_path("assets/data/deliveries.csv").string());
    set_ranges(v, data);
    v.train_loss = mse(v.params, data);
    return v;
}

CanaryResult run_canary(const CanaryParams& p) {
    check_params(p);
    CanaryResult r;
    r.params = p;
    r.n_requests = p.n_requests;
    r.v1 = article_version();
    r.v2 = fine_tuned_version("v2", r.v1,
                              delivery::load_deliveries_csv(data_path("assets/data/deliveries.csv").string()),
                              p.v2_unit, p.train_steps);

    // Inference: one request through the six steps, on each version. The
    // models load here, once, and serve every request after.
    delivery::DeliveryModel m1(r.v1.params), m2(r.v2.params);
    const auto answer = [](delivery::DeliveryModel& m, const Request& req) {
        Pipeline pl(m, req);
        const Response& resp = pl.run();
        return std::pair{resp, pl.trace().lookup("request.features")};
    };
    r.inference_v1 = answer(m1, delivery_request("3 km", 0, 0)).first.text;
    r.inference_v2 = answer(m2, delivery_request("3 km", 0, 0)).first.text;
    if (m1.weights_checksum() != r.v1.checksum || m2.weights_checksum() != r.v2.checksum)
        throw Error("canary: a loaded model's checksum is not its version's");

    // Serving and deployment: the stream.
    std::mt19937_64 traffic(p.seed), routing(p.seed ^ 0x9e3779b97f4a7c15ull);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    enum class Rollout { v1_only, canary, rolled_back, promoted } phase = Rollout::v1_only;
    const auto checksum_text = [](const ModelVersion& v) { return checksum_hex(v.checksum); };
    r.events.push_back({0, fmt::format("v1 ({}) serves all traffic: {}", checksum_text(r.v1), r.v1.trained_on)});
    double sum1 = 0, sum2 = 0;
    int oor1 = 0, oor2 = 0;
    for (int i = 0; i < p.n_requests; ++i) {
        if (phase == Rollout::v1_only && i == p.baseline_requests) {
            phase = Rollout::canary;
            // + 0.0: a fraction typed as -0 is 0, and prints so.
            r.events.push_back({i, fmt::format("v2 ({}) ships as a canary to {:.0f}% of traffic: {}", checksum_text(r.v2),
                                               100 * p.fraction + 0.0, r.v2.trained_on)});
        }
        // Clients send kilometres or metres; serving normalizes both to km.
        const double km = std::round((0.5 + 19.5 * uniform(traffic)) * 10) / 10;
        const bool in_metres = uniform(traffic) < 0.5;
        const double congestion = std::round(uniform(traffic) * 100) / 100;
        const int express = uniform(traffic) < 0.3 ? 1 : 0;
        CanaryRequest q;
        q.index = i;
        q.distance = in_metres ? fmt::format("{:.0f} m", km * 1000) : fmt::format("{:.1f} km", km);
        q.version = phase == Rollout::promoted ? 2 : phase == Rollout::canary && uniform(routing) < p.fraction ? 2 : 1;

        const auto [resp, features] = answer(q.version == 1 ? m1 : m2, delivery_request(q.distance, congestion, express));
        q.minutes = std::get<double>(resp.fields.front().value);
        const auto& x = std::get<std::vector<double>>(*features);
        std::copy(x.begin(), x.end(), q.features.begin());
        const ModelVersion& v = q.version == 1 ? r.v1 : r.v2;
        q.warnings = out_of_range(v, q.features, q.minutes);
        (q.version == 1 ? r.answered_v1 : r.answered_v2) += 1;
        (q.version == 1 ? sum1 : sum2) += q.minutes;
        if (!q.warnings.empty()) (q.version == 1 ? oor1 : oor2) += 1;
        if (q.version == 2 && phase == Rollout::canary) ++r.exposed;

        // The monitor judges the canary after each of its answers.
        if (phase == Rollout::canary && q.version == 2 && r.answered_v2 >= p.min_samples && r.answered_v1 > 0) {
            const double mean1 = sum1 / r.answered_v1, mean2 = sum2 / r.answered_v2;
            const double drift = std::fabs(mean2 - mean1) / mean1;
            const double share1 = double(oor1) / r.answered_v1, share2 = double(oor2) / r.answered_v2;
            std::vector<std::string> why;
            if (drift > p.mean_threshold)
                why.push_back(fmt::format("v2's mean predicted time {:.1f} min against v1's {:.1f} ({:+.0f}%, threshold "
                                          "±{:.0f}%)",
                                          mean2, mean1, 100 * (mean2 - mean1) / mean1, 100 * p.mean_threshold));
            if (share2 - share1 > p.range_threshold)
                why.push_back(fmt::format("{} of v2's {} out of range against {} of v1's {} ({:.0f}% vs {:.0f}%, "
                                          "threshold +{:.0f} points)",
                                          oor2, requests(r.answered_v2), oor1, requests(r.answered_v1), 100 * share2,
                                          100 * share1, 100 * p.range_threshold));
            if (!why.empty()) {
                r.alarm = true;
                r.alarm_at = i;
                r.alarm_reason = why.front();
                for (std::size_t k = 1; k < why.size(); ++k) r.alarm_reason += "; " + why[k];
                r.events.push_back({i, fmt::format("monitor alarm after {}: {}",
                                                   count_of(static_cast<std::size_t>(r.answered_v2), "v2 answer", "v2 answers"),
                                                   r.alarm_reason)});
                phase = Rollout::rolled_back;
                r.rolled_back = true;
                r.decided_at = i;
                r.events.push_back({i, fmt::format("rollback: v2 ({}) withdrawn, v1 ({}) serves all traffic from request "
                                                   "{} on",
                                                   checksum_text(r.v2), checksum_text(r.v1), i + 1)});
            } else if (p.promote_after > 0 && r.answered_v2 >= p.promote_after) {
                phase = Rollout::promoted;
                r.promoted = true;
                r.decided_at = i;
                r.events.push_back({i, fmt::format("v2 ({}) passed {} without an alarm (mean {:.1f} vs {:.1f} min): "
                                                   "promoted to all traffic",
                                                   checksum_text(r.v2),
                                                   count_of(static_cast<std::size_t>(r.answered_v2), "answer", "answers"),
                                                   mean2, mean1)});
            }
        }
        r.requests.push_back(std::move(q));
    }
    if (r.promoted) r.exposed = r.answered_v2;
    r.lost = r.n_requests - r.answered_v1 - r.answered_v2;
    r.tally_v1 = {r.answered_v1, oor1, r.answered_v1 ? sum1 / r.answered_v1 : 0};
    r.tally_v2 = {r.answered_v2, oor2, r.answered_v2 ? sum2 / r.answered_v2 : 0};
    r.events.push_back({p.n_requests - 1, fmt::format("{}: {} answered by v1, {} by v2, {} lost",
                                                      requests(r.n_requests), r.answered_v1, r.answered_v2, r.lost)});

    for (int first = 0; first < p.n_requests; first += p.window) {
        CanaryWindow w;
        w.first = first;
        w.last = std::min(p.n_requests, first + p.window) - 1;
        for (int i = w.first; i <= w.last; ++i) {
            const CanaryRequest& q = r.requests[static_cast<std::size_t>(i)];
            (q.version == 1 ? w.n_v1 : w.n_v2) += 1;
            (q.version == 1 ? w.v1_mean : w.v2_mean) += q.minutes;
        }
        if (w.n_v1) w.v1_mean /= w.n_v1;
        if (w.n_v2) w.v2_mean /= w.n_v2;
        r.windows.push_back(w);
    }
    return r;
}

namespace {
nlohmann::ordered_json version_json(const ModelVersion& v, const VersionTally& t) {
    return {{"name", v.name},
            {"checksum", checksum_hex(v.checksum)},
            {"trained_on", v.trained_on},
            {"weights", {v.params.bias, v.params.w[0], v.params.w[1], v.params.w[2]}},
            {"distance_unit", v.distance_unit},
            {"train_min", v.train_min},
            {"train_max", v.train_max},
            {"label_min", v.label_min},
            {"label_max", v.label_max},
            {"train_steps", v.train_steps},
            {"train_loss", v.train_loss},
            {"answered", t.answered},
            {"out_of_range", t.out_of_range},
            {"mean_minutes", t.mean_minutes}};
}
}  // namespace

nlohmann::ordered_json canary_json(const CanaryResult& r, bool with_requests) {
    const CanaryParams& p = r.params;
    nlohmann::ordered_json j;
    j["params"] = {{"fraction", p.fraction},       {"n_requests", p.n_requests},
                   {"baseline_requests", p.baseline_requests}, {"seed", p.seed},
                   {"v2_unit", p.v2_unit},          {"min_samples", p.min_samples},
                   {"mean_threshold", p.mean_threshold}, {"range_threshold", p.range_threshold},
                   {"promote_after", p.promote_after}};
    j["inference"] = {{"request", "distance 3 km, congestion 0, express lane 0"},
                      {"v1", r.inference_v1},
                      {"v2", r.inference_v2}};
    j["versions"] = {version_json(r.v1, r.tally_v1), version_json(r.v2, r.tally_v2)};
    j["serving"] = {{"n_requests", r.n_requests}, {"answered_v1", r.answered_v1}, {"answered_v2", r.answered_v2}, {"lost", r.lost}};
    j["deployment"] = {{"alarm", r.alarm},       {"alarm_at", r.alarm_at},   {"alarm_reason", r.alarm_reason},
                       {"rolled_back", r.rolled_back}, {"promoted", r.promoted}, {"decided_at", r.decided_at},
                       {"exposed", r.exposed}};
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    for (const CanaryEvent& e : r.events) events.push_back({{"request", e.request}, {"what", e.what}});
    j["events"] = events;
    nlohmann::ordered_json windows = nlohmann::ordered_json::array();
    for (const CanaryWindow& w : r.windows)
        windows.push_back({{"first", w.first}, {"last", w.last}, {"n_v1", w.n_v1}, {"n_v2", w.n_v2},
                           {"v1_mean", w.v1_mean}, {"v2_mean", w.v2_mean}});
    j["windows"] = windows;
    if (with_requests) {
        nlohmann::ordered_json reqs = nlohmann::ordered_json::array();
        for (const CanaryRequest& q : r.requests)
            reqs.push_back({{"index", q.index}, {"distance", q.distance}, {"features", q.features},
                            {"version", q.version}, {"minutes", q.minutes}, {"warnings", q.warnings}});
        j["requests"] = reqs;
    }
    return j;
}

}  // namespace sixstep::serving
