// The serving lab's canary experiment (lesson 16): inference, serving and
// deployment with the delivery model (serving/canary.h) — v2, trained on
// metres, ships to a share of the traffic, the monitor catches the skew, v1
// takes everything back, and every request is answered. Nothing here touches
// the GGUF model the serving kind loads: the versions are delivery models.
#include <fmt/format.h>

#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

namespace {

constexpr char fraction[] = "canary_fraction";
constexpr char n_requests[] = "canary_requests";
constexpr char v2_unit[] = "v2_unit";
constexpr char canary_seed[] = "canary_seed";

class CanaryLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        p_.fraction = f.number(fraction);
        p_.n_requests = f.whole(n_requests);
        p_.baseline_requests = std::min(p_.baseline_requests, p_.n_requests);
        p_.v2_unit = f.text(v2_unit);
        p_.seed = static_cast<std::uint64_t>(f.whole(canary_seed));
        ev.summary = fmt::format("{} requests; v2 (trained on distances in {}) as a canary on {:.0f}% of them",
                                 p_.n_requests, p_.v2_unit == "m" ? "metres" : "kilometres", 100 * p_.fraction);
        ev.out(fraction, p_.fraction);
        ev.out(n_requests, static_cast<double>(p_.n_requests));
        ev.out(v2_unit, p_.v2_unit);
    }

    void run(ServingModel&, ServingExhibit& ex, TraceEvent& ev) override {
        ex.canary = run_canary(p_);
        ev.summary = fmt::format("v2 fine-tuned for {} steps, then {} requests routed and answered", p_.train_steps,
                                 p_.n_requests);
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const CanaryResult& r = *ex.canary;
        ev.out("v1_checksum", checksum_hex(r.v1.checksum));
        ev.out("v2_checksum", checksum_hex(r.v2.checksum));
        ev.out("inference_v1", r.inference_v1);
        ev.out("inference_v2", r.inference_v2);
        ev.out("answered_v1", static_cast<double>(r.answered_v1));
        ev.out("answered_v2", static_cast<double>(r.answered_v2));
        ev.out("lost", static_cast<double>(r.lost));
        ev.out("alarm", yes_no(r.alarm));
        ev.out("alarm_at", static_cast<double>(r.alarm_at));
        ev.out("alarm_reason", r.alarm_reason);
        ev.out("rolled_back", yes_no(r.rolled_back));
        ev.out("promoted", yes_no(r.promoted));
        ev.out("decided_at", static_cast<double>(r.decided_at));
        ev.out("exposed", static_cast<double>(r.exposed));
        ev.out("v1_mean_minutes", r.tally_v1.mean_minutes, "min");
        ev.out("v2_mean_minutes", r.tally_v2.mean_minutes, "min");
        for (const CanaryEvent& e : r.events) ev.says(fmt::format("request {}: {}", e.request, e.what));
        ev.summary = r.rolled_back ? fmt::format("rolled back at request {}", r.decided_at)
                     : r.promoted  ? fmt::format("v2 promoted at request {}", r.decided_at)
                                   : "no decision";
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const CanaryResult& r = *ex.canary;
        const double answered = r.answered_v1 + r.answered_v2;
        const double shift = r.tally_v1.mean_minutes > 0 ? r.tally_v2.mean_minutes / r.tally_v1.mean_minutes : 0;
        ev.out("answered_share", answered / r.n_requests);
        ev.out("answered_percent", 100 * answered / r.n_requests, "%");  // the card's: "100%", not "1"
        ev.out("exposed_share", static_cast<double>(r.exposed) / r.n_requests);
        ev.out("mean_ratio", shift);
        ev.out("same_weights", yes_no(r.v1.checksum == r.v2.checksum));
        ev.says(fmt::format("answered ÷ sent = ({} + {}) ÷ {} = {:.3f}", r.answered_v1, r.answered_v2, r.n_requests,
                            answered / r.n_requests));
        // With the digits that make the figures divide to the quotient printed.
        const Division d = division(
            r.tally_v2.mean_minutes, r.tally_v1.mean_minutes, 2, [](double x, int p) { return fmt::format("{:.{}f}", x, p); },
            [](double q) { return fmt::format("{:.2f}", q); });
        ev.says(fmt::format("v2's mean ÷ v1's = {} ÷ {} min = {}", d.a, d.b, d.q));
        // exposed counts v2's answers up to a rollback, and every one of them
        // when it was promoted: the summary says which.
        ev.summary = r.rolled_back ? fmt::format("{} of {} requests answered; v2 answered {} before it was rolled back",
                                                 answered, r.n_requests, r.exposed)
                     : r.promoted  ? fmt::format("{} of {} requests answered; v2 answered {}, promoted at request {}",
                                                 answered, r.n_requests, r.exposed, r.decided_at)
                                   : fmt::format("{} of {} requests answered; v2 answered {}", answered, r.n_requests,
                                                 r.exposed);
        if (r.rolled_back)
            // The means over every answer, then the monitor's own (over the
            // answers up to its alarm): two different v1 figures, each said.
            // The reason holds parentheses of its own: set off by dashes.
            return fmt::format("Version {} (v2) promised {:.1f} minutes on average where v1 promised {:.1f} (each "
                               "over all its answers); the monitor raised the alarm at request {} — {} — and v1 "
                               "took all traffic back. {} of {} "
                               "requests were answered, {} lost; v2 answered {} of them.",
                               checksum_hex(r.v2.checksum), r.tally_v2.mean_minutes, r.tally_v1.mean_minutes,
                               r.alarm_at, r.alarm_reason, answered, r.n_requests, r.lost, r.exposed);
        if (r.promoted)
            return fmt::format("v2 ({}) agreed with v1 ({:.1f} vs {:.1f} minutes on average) and was promoted at "
                               "request {}; {} of {} requests answered, {} lost.",
                               checksum_hex(r.v2.checksum), r.tally_v2.mean_minutes, r.tally_v1.mean_minutes,
                               r.decided_at, answered, r.n_requests, r.lost);
        // Neither: the canary ended before the monitor had seen enough of v2.
        return fmt::format("v2 ({}) answered {} request{} ({:.1f} vs {:.1f} minutes on average), too few for the "
                           "monitor to decide: it was neither promoted nor rolled back; {} of {} requests answered, "
                           "{} lost.",
                           checksum_hex(r.v2.checksum), r.answered_v2, r.answered_v2 == 1 ? "" : "s",
                           r.tally_v2.mean_minutes, r.tally_v1.mean_minutes, answered, r.n_requests, r.lost);
    }

private:
    CanaryParams p_;
};

}  // namespace

std::unique_ptr<LabExperiment> make_canary_lab() { return std::make_unique<CanaryLab>(); }

// Not tokens: v2's fine-tuning by gradient descent, then every request of
// the stream through the six steps, and one on each version first.
Work canary_lab_work(const FieldLookup& field) {
    Work w;
    w.train_steps = CanaryParams{}.train_steps;
    w.served_requests = lab::whole_field(field, n_requests) + 2;
    return w;
}

void declare_canary_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    const CanaryParams d;
    knobs.push_back(lab::number(fraction, 0, 1, d.fraction, "", "canary: share of traffic v2 gets while a canary"));
    knobs.push_back(lab::whole(n_requests, 1, 1'000'000, d.n_requests, "", "canary: requests in the stream"));
    knobs.push_back(lab::choice(v2_unit, {"m", "km"},
                                "canary: distance unit of v2's training data (m: the skew; km: a sound v2)"));
    knobs.push_back(lab::whole(canary_seed, 0, 2147483647, static_cast<int>(d.seed), "",
                               "canary: seed of the traffic and the routing"));
    const Stage rq = Stage::request, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, fraction), VT::number, "", "canary: share of traffic for v2"},
        {path(rq, n_requests), VT::number, "", "canary: requests in the stream"},
        {path(rq, v2_unit), VT::text, "", "canary: the unit v2's training data measured distance in"},
        {path(op, "v1_checksum"), VT::text, "", "canary: checksum of v1's weights (its version identity)"},
        {path(op, "v2_checksum"), VT::text, "", "canary: checksum of v2's weights"},
        {path(op, "inference_v1"), VT::text, "", "canary: 3 km, no congestion, no express lane through v1"},
        {path(op, "inference_v2"), VT::text, "", "canary: the same request through v2"},
        {path(op, "answered_v1"), VT::number, "", "canary: requests v1 answered"},
        {path(op, "answered_v2"), VT::number, "", "canary: requests v2 answered"},
        {path(op, "lost"), VT::number, "", "canary: requests sent but not answered (0 unless serving is broken)"},
        {path(op, "alarm"), VT::text, "", "canary: \"yes\" when the monitor raised an alarm"},
        {path(op, "alarm_at"), VT::number, "", "canary: the request at which it did (−1: never)"},
        {path(op, "alarm_reason"), VT::text, "", "canary: what the monitor saw"},
        {path(op, "rolled_back"), VT::text, "", "canary: \"yes\" when v2 was withdrawn"},
        {path(op, "promoted"), VT::text, "", "canary: \"yes\" when v2 took all traffic"},
        {path(op, "decided_at"), VT::number, "", "canary: the request of the rollback or promotion (−1: none)"},
        {path(op, "exposed"), VT::number, "", "canary: requests v2 answered before it was withdrawn (all, if promoted)"},
        {path(op, "v1_mean_minutes"), VT::number, "min", "canary: v1's mean predicted minutes"},
        {path(op, "v2_mean_minutes"), VT::number, "min", "canary: v2's mean predicted minutes"},
        {path(pp, "answered_share"), VT::number, "", "canary: requests answered ÷ requests sent"},
        {path(pp, "answered_percent"), VT::number, "%", "canary: the same in percent"},
        {path(pp, "exposed_share"), VT::number, "", "canary: requests v2 answered ÷ requests sent"},
        {path(pp, "mean_ratio"), VT::number, "", "canary: v2's mean predicted minutes ÷ v1's"},
        {path(pp, "same_weights"), VT::text, "", "canary: \"yes\" when v1 and v2 have the same checksum"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
