// The serving lab's cold start (lesson 14): a fresh instance of the loaded
// model's file against the warm one, then requests after idle gaps served by
// an instance that unloads when idle beside one kept warm (tools/cold_start.h).
// The page cache is left as it is unless the request asks to drop it:
// dropping is best effort and may need privileges, so a lesson never relies
// on it.
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

namespace {

constexpr char cold_tokens[] = "cold_tokens";
constexpr char idle_gaps[] = "idle_gaps";
constexpr char unload_after[] = "unload_after";
constexpr char drop_cache[] = "drop_cache";

// "0,20,300" → idle seconds, in the order written; throws sixstep::Error.
std::vector<double> idle_gaps_of(const std::string& text) {
    std::vector<double> gaps = number_list(text, idle_gaps, false);
    // The range the cold start takes (a second to 31 years), checked where
    // the lesson writes it: 1e308 failed only when the step ran.
    for (double g : gaps) {
        if (g < 0) throw Error(fmt::format("\"{}\": an idle gap of {} s is negative", idle_gaps, g));
        if (!(g <= 1e9)) throw Error(fmt::format("\"{}\": an idle gap of {} s is over 1e9 s (31 years)", idle_gaps, g));
    }
    return gaps;
}

class ColdStartLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        p_.n_predict = f.whole(cold_tokens);
        p_.idle_s = idle_gaps_of(f.text(idle_gaps));
        p_.unload_after_s = f.number(unload_after);
        p_.drop_cache = f.on(drop_cache);
        ev.summary = fmt::format("{} tokens per request; {} requests after idle gaps, unloading after {} s idle",
                                 p_.n_predict, p_.idle_s.size(), p_.unload_after_s);
        ev.out(idle_gaps, p_.idle_s, "s");
        ev.out(unload_after, p_.unload_after_s, "s");
        ev.out(drop_cache, yes_no(p_.drop_cache));
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        p_.model = model.llm().path();
        p_.n_threads = model.llm().params().n_threads;
        p_.backend = model.llm().params().backend;
        ex.cold_start = llm::measure_cold_start(p_);
        ev.summary = fmt::format("{} requests timed, then {} after idle gaps on each instance",
                                 ex.cold_start->requests.size(), p_.idle_s.size());
        for (const std::string& n : ex.cold_start->notes) ev.says(n);
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const llm::ColdStartResult& r = *ex.cold_start;
        const llm::RequestTiming& cold = r.requests[1];  // a fresh instance, the file in the page cache
        ev.out("first_start", std::string(llm::start_name(r.requests[0].start)));
        ev.out("first_ms", r.requests[0].total_ms, "ms");
        ev.out("cached_load_ms", cold.load_ms, "ms");
        ev.out("cached_ms", cold.total_ms, "ms");
        ev.out("warm_load_ms", r.requests.back().load_ms, "ms");
        ev.out("warm_median_ms", r.warm_median_ms, "ms");
        ev.out("scale_to_zero_cold_starts", static_cast<double>(r.keep_warm.n_cold));
        ev.out("scale_to_zero_total_ms", r.keep_warm.scale_to_zero_total_ms, "ms");
        ev.out("kept_warm_total_ms", r.keep_warm.kept_warm_total_ms, "ms");
        ev.out("scale_to_zero_held_s", r.keep_warm.scale_to_zero_held_s, "s");
        ev.out("kept_warm_held_s", r.keep_warm.kept_warm_held_s, "s");
        // The total from the parts as printed, so that the line adds up.
        const auto hundredth = [](double ms) { return std::round(ms * 100) / 100; };
        for (const llm::RequestTiming& t : r.requests)
            ev.says(fmt::format("request {} {}: load {:.2f} ms + request {:.2f} ms = {:.2f} ms", t.index,
                                llm::start_name(t.start), hundredth(t.load_ms), hundredth(t.request_ms),
                                hundredth(t.load_ms) + hundredth(t.request_ms)));
        ev.summary = fmt::format("a fresh instance: {:.2f} ms; warm: {:.2f} ms (median)", cold.total_ms, r.warm_median_ms);
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const llm::ColdStartResult& r = *ex.cold_start;
        const llm::KeepWarm& k = r.keep_warm;
        const double cached_over_warm = r.warm_median_ms > 0 ? r.requests[1].total_ms / r.warm_median_ms : 0;
        const double held = k.kept_warm_held_s > 0 ? k.scale_to_zero_held_s / k.kept_warm_held_s : 0;
        const double wait = k.kept_warm_total_ms > 0 ? k.scale_to_zero_total_ms / k.kept_warm_total_ms : 0;
        ev.out("first_over_warm", r.cold_over_warm);
        ev.out("cached_over_warm", cached_over_warm);
        ev.out("held_ratio", held);
        ev.out("wait_ratio", wait);
        // With the digits that make the figures divide to the quotient printed.
        const auto places = [](double x, int p) { return fmt::format("{:.{}f}", x, p); };
        const Division d = division(r.requests[1].total_ms, r.warm_median_ms, 2, places,
                                    [](double q) { return fmt::format("{:.2f}", q); });
        ev.says(fmt::format("fresh instance ÷ warm = {} ÷ {} ms = {}", d.a, d.b, d.q));
        ev.says(fmt::format("weights held, scale to zero ÷ kept warm = {:.0f} ÷ {:.0f} s = {:.3f}",
                            k.scale_to_zero_held_s, k.kept_warm_held_s, held));
        ev.summary = fmt::format("a fresh instance waited {:.1f}× a warm one", cached_over_warm);
        return fmt::format("A fresh instance of {} paid {:.2f} ms to map the file and build itself before its request "
                           "({:.2f} ms in all, against {:.2f} ms warm). Unloading after {:.0f} s idle held the weights "
                           "{:.0f} s instead of {:.0f} s, and cost {} cold start{}: {:.2f} ms of waiting against {:.2f} "
                           "ms kept warm.",
                           r.model, r.requests[1].load_ms, r.requests[1].total_ms, r.warm_median_ms, p_.unload_after_s,
                           k.scale_to_zero_held_s, k.kept_warm_held_s, k.n_cold, k.n_cold == 1 ? "" : "s",
                           k.scale_to_zero_total_ms,
                           k.kept_warm_total_ms);
    }

private:
    llm::ColdStartParams p_;
};

}  // namespace

std::unique_ptr<LabExperiment> make_cold_start_lab() { return std::make_unique<ColdStartLab>(); }

Work cold_start_lab_work(const FieldLookup& field) {
    llm::ColdStartParams p;
    p.n_predict = static_cast<int>(lab::whole_field(field, cold_tokens));
    p.idle_s.assign(static_cast<std::size_t>(lab::list_length(field(idle_gaps))), 0.0);
    Work w;
    w.forward_tokens = llm::cold_start_positions_at_most(p);
    // The process's first instance, a cold and a second fresh one; with
    // idle gaps, the instance that scales to zero (its first load, then at
    // most one after each gap) and the one kept warm (tools/cold_start.cpp).
    const auto gaps = static_cast<long long>(p.idle_s.size());
    w.model_file_passes = 3 + (gaps > 0 ? 1 + gaps + 1 : 0);
    return w;
}

void declare_cold_start_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    const llm::ColdStartParams d;
    knobs.push_back(lab::whole(cold_tokens, 1, 4096, 8, "tokens", "cold_start: tokens per request"));
    Knob gaps = lab::knob(idle_gaps, KnobType::text, "0,20,300,5,900,30",
                          "cold_start: idle seconds before each keep-warm request, comma-separated");
    gaps.rule = [](const std::string& text) { (void)idle_gaps_of(text); };
    knobs.push_back(std::move(gaps));
    Knob u = lab::number(unload_after, 1e-3, 1e9, d.unload_after_s, "s", "cold_start: idle seconds before an instance unloads");
    u.slider_min = 1, u.slider_max = 1000;
    knobs.push_back(u);
    knobs.push_back(lab::knob(drop_cache, KnobType::boolean, "false",
                              "cold_start: try to evict the file from the page cache first (best effort)"));
    const Stage rq = Stage::request, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, idle_gaps), VT::numbers, "s", "cold_start: the idle gaps"},
        {path(rq, unload_after), VT::number, "s", "cold_start: idle seconds before unloading"},
        {path(rq, drop_cache), VT::text, "", "cold_start: \"yes\" when the page cache is to be dropped first"},
        {path(op, "first_start"), VT::text, "", "cold_start: how the first request found the file"},
        {path(op, "first_ms"), VT::number, "ms", "cold_start: the first request, load included"},
        {path(op, "cached_load_ms"), VT::number, "ms",
         "cold_start: a fresh instance's load (map, vocabulary, backend), the file in the page cache"},
        {path(op, "cached_ms"), VT::number, "ms", "cold_start: that instance's first request, load included"},
        {path(op, "warm_load_ms"), VT::number, "ms", "cold_start: a warm request's load (none)"},
        {path(op, "warm_median_ms"), VT::number, "ms", "cold_start: median warm request"},
        {path(op, "scale_to_zero_cold_starts"), VT::number, "",
         "cold_start: cold starts of the instance that unloads when idle, after its first start (the one kept warm "
         "has none)"},
        {path(op, "scale_to_zero_total_ms"), VT::number, "ms", "cold_start: its requests' waits, summed"},
        {path(op, "kept_warm_total_ms"), VT::number, "ms", "cold_start: the kept-warm instance's, summed"},
        {path(op, "scale_to_zero_held_s"), VT::number, "s", "cold_start: seconds it held the weights (virtual clock)"},
        {path(op, "kept_warm_held_s"), VT::number, "s", "cold_start: seconds the kept-warm one held them"},
        {path(pp, "first_over_warm"), VT::number, "", "cold_start: the first request ÷ median warm"},
        {path(pp, "cached_over_warm"), VT::number, "", "cold_start: a fresh instance's first request ÷ median warm"},
        {path(pp, "held_ratio"), VT::number, "", "cold_start: weights held, scale to zero ÷ kept warm"},
        {path(pp, "wait_ratio"), VT::number, "", "cold_start: summed waits, scale to zero ÷ kept warm"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
