// The serving lab's batch sweep (lesson 08): decode tokens/s and TPOT per
// batch size on the engine, the knee of the curve (batch_sweep.h, knee.h),
// and what a step reads besides the weights: the KV cache of every sequence.
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

namespace {

// "1,2,4" → {1, 2, 4}, each a batch size, ascending; throws sixstep::Error.
std::vector<int> batch_sizes_of(const std::string& text) {
    std::vector<int> out;
    for (double b : number_list(text, keys::batch_sizes)) {
        if (b != std::floor(b) || b < 1 || b > 4096)
            throw Error(fmt::format("\"batch_sizes\": {} is not a batch size (whole, 1 to 4096)", format_value(Value{b})));
        out.push_back(static_cast<int>(b));
    }
    return out;
}

class BatchSweepLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        p_.batch_sizes = batch_sizes_of(f.text(keys::batch_sizes));  // the params' default list is not this request's
        p_.n_context = f.whole(keys::context);
        p_.n_steps = f.whole(keys::steps);
        p_.repetitions = f.whole(keys::repetitions);
        ev.summary = fmt::format("a batch sweep over {} batch sizes, {} decode steps each at a {}-token context",
                                 p_.batch_sizes.size(), p_.n_steps, p_.n_context);
        ev.out(keys::batch_sizes, std::vector<double>(p_.batch_sizes.begin(), p_.batch_sizes.end()));
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        ex.sweep = run_batch_sweep(model.llm().backend(), p_);
        ev.out(keys::cpu_wait_ms, ex.sweep->cpu_wait_ms, "ms");
        ev.summary = fmt::format("{} batch sizes × {} runs of {} decode steps", p_.batch_sizes.size(), p_.repetitions,
                                 p_.n_steps);
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const BatchSweepResult& r = *ex.sweep;
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

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const BatchSweepResult& r = *ex.sweep;
        const BatchSweepPoint& first = r.points.front();
        const BatchSweepPoint& last = r.points.back();
        ev.out(keys::largest_batch, static_cast<double>(last.n_batch));
        ev.out(keys::speedup_at_largest, last.speedup);
        ev.out(keys::tpot_ratio_at_largest, last.tpot_ratio);
        const double kv_share = kv_to_weights_at_largest(r);
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
        // With the digits that make the figures divide to the quotient printed.
        const auto places = [](double x, int p) { return fmt::format("{:.{}f}", x, p); };
        const auto times = [](double ratio) { return fmt::format("{:.2f}", ratio); };
        const Division tput = division(last.tokens_per_s, first.tokens_per_s, 1, places, times);
        const Division tpot = division(last.step_ms, first.step_ms, 3, places, times);
        ev.says(fmt::format("throughput at batch {} ÷ batch {} = {} ÷ {} = {}×", last.n_batch, first.n_batch, tput.a,
                            tput.b, tput.q));
        ev.says(fmt::format("TPOT at batch {} ÷ batch {} = {} ÷ {} ms = {}×", last.n_batch, first.n_batch, tpot.a,
                            tpot.b, tpot.q));
        std::string verdict = r.knee.verdict;  // a sentence of its own here: "No knee: …", "Knee at x = …"
        if (!verdict.empty()) verdict.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(verdict.front())));
        return fmt::format("{} sequences per step gave {:.1f}× the tokens/s of {} while each token took {:.1f}× as "
                           "long. {}",
                           last.n_batch, last.speedup, first.n_batch, last.tpot_ratio, verdict);
    }

private:
    BatchSweepParams p_;
};

}  // namespace

std::unique_ptr<LabExperiment> make_batch_sweep_lab() { return std::make_unique<BatchSweepLab>(); }

// Counted at its most: the sweep prefills its largest batch once, then per
// batch size runs one warm-up step and repetitions × steps timed ones.
Work batch_sweep_lab_work(const FieldLookup& field) {
    const auto whole = [&](const char* name) { return lab::whole_field(field, name); };
    long long largest = 0, sum = 0;
    for (long long b : lab::whole_numbers(field(keys::batch_sizes))) largest = std::max(largest, b), sum += b;
    Work w;
    w.forward_tokens = largest * whole(keys::context) + sum * (1 + whole(keys::repetitions) * whole(keys::steps));
    return w;
}

void declare_batch_sweep_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    const BatchSweepParams d;
    Knob sizes = lab::knob(keys::batch_sizes, KnobType::text, "1,2,4,8,16,32",
                           "batch_sweep: sequences per decode step, ascending, comma-separated");
    sizes.rule = [](const std::string& text) { (void)batch_sizes_of(text); };
    knobs.push_back(std::move(sizes));
    knobs.push_back(lab::whole(keys::context, 1, 4096, 32, "tokens",
                               "batch_sweep, queue: tokens each sequence holds before the timed steps"));
    knobs.push_back(lab::whole(keys::steps, 1, 4096, 8, "", "batch_sweep: timed decode steps per run"));
    knobs.push_back(lab::whole(keys::repetitions, 1, 100, d.repetitions, "",
                               "batch_sweep: runs per batch size (the median is kept)"));
    const Stage rq = Stage::request, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, keys::batch_sizes), VT::numbers, "", "batch_sweep: the batch sizes"},
        {path(op, keys::batch_sizes), VT::numbers, "", "batch_sweep: batch sizes, ascending"},
        {path(op, keys::tokens_per_s), VT::numbers, "tok/s", "batch_sweep: decode tokens/s at each batch size"},
        {path(op, keys::step_ms), VT::numbers, "ms", "batch_sweep: one decode step (= TPOT) at each batch size"},
        {path(op, keys::speedup), VT::numbers, "", "batch_sweep: tokens/s ÷ tokens/s at the first batch size"},
        {path(op, keys::tpot_ratio), VT::numbers, "", "batch_sweep: step time ÷ step time at the first batch size"},
        {path(op, keys::knee), VT::text, "", "batch_sweep: \"yes\" when the two-line fit accepts a knee"},
        {path(op, keys::knee_batch), VT::number, "", "batch_sweep: the knee's batch size (0: none)"},
        {path(op, keys::knee_verdict), VT::text, "", "batch_sweep: the knee, or why there is none, in words"},
        {path(op, keys::weight_bytes), VT::number, "B", "batch_sweep: weight bytes read per decode step (any batch size)"},
        {path(op, keys::kv_bytes), VT::numbers, "B",
         "batch_sweep: KV cache bytes read per decode step at each batch size: sequences × mean context × KV bytes per "
         "position"},
        {path(pp, keys::largest_batch), VT::number, "", "batch_sweep: the largest batch size"},
        {path(pp, keys::speedup_at_largest), VT::number, "", "batch_sweep: tokens/s there ÷ at the first batch size"},
        {path(pp, keys::tpot_ratio_at_largest), VT::number, "", "batch_sweep: step time there ÷ at the first batch size"},
        {path(pp, keys::kv_to_weights_at_largest), VT::number, "",
         "batch_sweep: KV cache bytes read per step at the largest batch ÷ the weight bytes"},
        {path(pp, keys::gain_per_doubling_first_quarter), VT::number, "",
         "batch_sweep: tokens/s gained per doubling of the batch over the first quarter of the sizes (with 8 sizes, "
         "the first to the third; 0 with under 3 sizes)"},
        {path(pp, keys::gain_per_doubling_last_quarter), VT::number, "",
         "batch_sweep: the same over the last quarter (with 8 sizes, the sixth to the largest)"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
