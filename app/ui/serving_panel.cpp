// The serving lab's view (lessons 8–16), drawn from the serving model's
// exhibit: the batch sweep (tokens/s and TPOT against batch size, the knee
// marked, the two fitted lines), the scheduler's timeline (one row per
// request: queued, prefill, decode, stalled, preempted; a compared run below
// on the same time axis), the KV block map at the pool's fullest (one square
// per block, coloured by the request that owns it, shared prefix blocks
// outlined), and the queueing curve (wait in service times against
// utilization, the formulas as lines, the simulations as dots with their
// error bars, the utilization the knob picked marked).
//
// Lessons 12–16's charts are in their own files (quantization_panel.cpp, …),
// chosen here by the exhibit's experiment.
//
// Every chart is drawn with plot.h, and every number on it comes from the
// exhibit: the panel computes nothing.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/text_capture.h"
#include "app/ui/theme.h"
#include "pipeline/serving/quantity.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/serving/traffic_metrics.h"

namespace sixstep::ui {

namespace {

using namespace sixstep::serving;

constexpr std::uint32_t line_a_rgb = 0x1D4ED8;  // the first series: throughput, this run, M/D/1
constexpr std::uint32_t line_b_rgb = 0xB45309;  // the second: TPOT, M/M/1
constexpr std::uint32_t line_c_rgb = 0x15803D;  // the third: the measured steps
constexpr std::uint32_t chart_rgb = 0xF8FAFC;   // a chart's background

// A line chart's frame at the cursor, `size` in all: room on the left for
// y values and under it for the x axis, its ticks and its name, or its ticks
// alone where the chart under it names the same axis (plot::begin keeps the
// line above it for the y unit).
plot::Frame chart(ImVec2 size, double x0, double x1, double y0, double y1, bool axis_name = true) {
    const float line = ImGui::GetFontSize() * 0.85f;
    const float left = line * 3.2f, right = line * 3.2f;
    return plot::begin(ImVec2(size.x - right, std::max(size.y, line * 5.4f)), x0, x1, y0, y1, left,
                       line * (axis_name ? 2.4f : 1.4f), chart_rgb);
}

// The height left under what the panel drew so far (a legend may have
// wrapped to two lines), room for two charts stacked included.
float rest_height() {
    return ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y * 2;
}

void wrapped(const std::string& text) { text_wrapped(tr(text)); }

// ---- the batch sweep --------------------------------------------------------------

// The first point's value beside it: with the top tick's value, the growth
// the narration speaks of can be read off the chart ("241" to "2.97k").
void first_value(const plot::Frame& f, double x, double y) {
    const ImVec2 at = f.at(x, y);
    plot::label(ImVec2(at.x + 6, at.y - ImGui::GetFontSize() * 0.85f - 2), pretty_number(y, 3), theme::text_rgb, 0, 0.8f);
}

// The last point's multiple of the first, above the chart's right end
// (beside a point it sat on the curve): "far less than 128×" in the
// narration is a number on the chart ("batch 128: 13× batch 1's").
void last_ratio(const plot::Frame& f, double last_batch, double ratio, double first_batch) {
    plot::label(ImVec2(f.max.x, plot::above(f)),
                fmt::format("batch {:g}: {}\u00d7 batch {:g}'s", last_batch, pretty_number(ratio, 3), first_batch),
                theme::text_rgb, 1, 0.8f);
}

// judged: the raw output (the knee, found or not) came out. Before it the
// sweep's points alone: the forward pass measures every batch size at once,
// and lesson 08's "Measure" step showed the knee's verdict three steps early.
void draw_sweep(const BatchSweepResult& r, ImVec2 avail, bool judged) {
    if (r.points.empty()) return;
    double tps_max = 0, ms_max = 0;
    std::vector<double> xs, tps, ms;
    for (const BatchSweepPoint& p : r.points) {
        xs.push_back(p.n_batch), tps.push_back(p.tokens_per_s), ms.push_back(p.step_ms);
        tps_max = std::max(tps_max, p.tokens_per_s), ms_max = std::max(ms_max, p.step_ms);
    }
    const double x0 = xs.front(), x1 = xs.size() > 1 ? xs.back() : xs.front() + 1;
    const bool log_x = xs.size() > 1 && x1 / x0 > 8;  // 1 … 64: doublings evenly spaced
    std::vector<std::pair<std::uint32_t, std::string>> legend = {{line_a_rgb, "decode tokens/s"},
                                                                 {line_b_rgb, "TPOT (one step), ms"}};
    const bool fitted = judged && r.knee.fitted;
    if (fitted) legend.push_back({theme::muted_rgb, "dashed: the two-line fit"});
    plot::legend(legend, true, {false, false, true});
    // Under the charts, the verdict and what bends the curve beside the
    // weights: the KV cache a step reads at the largest batch (lesson 08's
    // last step speaks of it, and its context knob moves it).
    const BatchSweepPoint& last = r.points.back();
    const auto bytes = [](double n) {  // "60.8 MB" stays on one line
        std::string t = bytes_decimal(n);
        if (const std::size_t sp = t.find(' '); sp != std::string::npos) t.replace(sp, 1, "\u00a0");
        return t;
    };
    const std::string kv_line = tr(fmt::format("KV cache read per step at batch {}: {} = {}\u00d7 the weights ({})",
                                               last.n_batch, bytes(last.cost.kv_bytes),
                                               pretty_number(kv_to_weights_at_largest(r), 2),
                                               bytes(static_cast<double>(r.shape.weight_bytes))));
    // The two charts share what the legend and the lines under them leave.
    // The KV line only where both charts keep the height chart() gives them
    // at the least: at 1920x1080, beside a verdict of three lines, they were
    // held at that height and overran the pane.
    const float spacing = ImGui::GetStyle().ItemSpacing.y;
    const std::string verdict = judged ? tr(r.knee.verdict) : tr("the knee is judged with the raw output");
    const float verdict_only = text_wrapped_height(verdict, avail.x);
    const float with_kv = verdict_only + spacing + text_wrapped_height(kv_line, avail.x);
    const float chart_min = std::max(100.0f, ImGui::GetFontSize() * 0.85f * 5.4f);
    const bool show_kv = (rest_height() - with_kv - spacing) / 2 >= chart_min;
    const float verdict_h = show_kv ? with_kv : verdict_only;
    const float h = std::floor(std::max(100.0f, (rest_height() - verdict_h - spacing) / 2));

    // The two share the batch axis: named once, under the second.
    plot::Frame a = chart(ImVec2(avail.x, h), x0, x1, 0, tps_max * 1.1, false);
    a.log_x = log_x;
    plot::x_axis(a, xs, "");
    plot::y_axis(a, "tokens/s", std::vector<double>{tps_max});
    if (fitted)  // the two lines of the fit, over their own points
        for (const FitLine& f : {r.knee.rising, r.knee.tail})
            plot::segment(a, f.x0, f.at(f.x0), f.x1, f.at(f.x1), theme::muted_rgb, 1.5f, true);
    plot::line(a, xs, tps, line_a_rgb);
    first_value(a, xs.front(), tps.front());
    if (xs.size() > 1) last_ratio(a, xs.back(), r.points.back().speedup, xs.front());
    if (judged && r.knee.found) plot::vmarker(a, r.knee.x, theme::bad_rgb, fmt::format("knee: batch {:g}", r.knee.x));
    plot::outline(a, theme::pending_border_rgb);

    plot::Frame b = chart(ImVec2(avail.x, h), x0, x1, 0, ms_max * 1.1);
    b.log_x = log_x;
    plot::x_axis(b, xs, "batch size");
    plot::y_axis(b, "TPOT ms", std::vector<double>{ms_max});
    plot::line(b, xs, ms, line_b_rgb);
    first_value(b, xs.front(), ms.front());
    if (xs.size() > 1) last_ratio(b, xs.back(), r.points.back().tpot_ratio, xs.front());
    plot::outline(b, theme::pending_border_rgb);
    if (judged) text_wrapped(verdict);
    else ImGui::TextDisabled("%s", verdict.c_str());
    if (!show_kv) return;  // the inspector's postprocess stage has it
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::muted_rgb));
    text_wrapped(kv_line);
    ImGui::PopStyleColor();
}

// ---- the scheduler's timeline -----------------------------------------------------------

std::uint32_t phase_rgb(Phase p) {
    switch (p) {
        case Phase::queued: return 0xD1D5DB;
        // As lessons 04 and 05's timeline draws them: prefill blue, decode green.
        case Phase::prefill: return theme::prefill_bar_rgb;
        case Phase::decode: return theme::decode_bar_rgb;
        case Phase::stalled: return 0xFDE68A;
        case Phase::preempted: return 0xDC2626;
    }
    return 0x000000;
}

// One row per request, its phases as bars on a time axis shared with the
// compared run (t_max).
void draw_gantt(const TrafficRun& run, const std::string& label, double t_max, ImVec2 size) {
    const float line = ImGui::GetFontSize() * 0.85f;
    // The label in the line plot::begin keeps above the chart.
    const ImVec2 p = ImGui::GetCursorScreenPos();
    plot::label(p,
                fmt::format("{}: {} requests, {:.1f} ms of virtual time", label, run.requests.size(), run.info.duration_ms),
                theme::text_rgb, 0, 0.85f);
    const int n = static_cast<int>(run.requests.size());
    const plot::Frame f = plot::begin(ImVec2(size.x - 4, size.y - ImGui::GetStyle().ItemSpacing.y), 0,
                                      t_max > 0 ? t_max : 1, 0, std::max(n, 1),
                                      line * 2.5f, line * 1.3f, chart_rgb);
    if (n == 0 || t_max <= 0) return;
    for (int i = 0; i < n; ++i)
        for (const PhaseSpan& s : run.requests[static_cast<std::size_t>(i)].spans)
            plot::span(f, i, s.t0_ms, s.t1_ms, phase_rgb(s.phase));
    plot::outline(f, theme::pending_border_rgb);
    plot::label(ImVec2(p.x, f.min.y), "req", theme::muted_rgb, 0, 0.85f);
    plot::label(ImVec2(f.min.x, f.max.y + 1), "0", theme::muted_rgb, 0, 0.85f);
    plot::label(ImVec2(f.max.x, f.max.y + 1), fmt::format("{:.0f} ms", t_max), theme::muted_rgb, 1, 0.85f);
}

// What the comparison is about, as numbers, above either view: the two arms'
// figures that the lesson's question turns on ("median TTFT 4.6 vs 21.0 ms"),
// so the outcome is on the panel and not only in the inspector.
void draw_comparison(const ServingExhibit& e) {
    if (!e.run || !e.baseline || e.compare.empty()) return;
    struct Shown {
        const char* key;     // a traffic figure (traffic_figures())
        const char* format;  // this arm's value, then the baseline's
    };
    std::vector<Shown> shown;
    if (e.compare == "policy")
        // TPOT too: what continuous batching's TTFT costs (lesson 10)
        shown = {{"ttft_p50_ms", "median TTFT {} vs {} ms"},
                 {"tpot_p50_ms", "median TPOT {} vs {} ms"},
                 {"batch_occupancy", "batch slots in use {}% vs {}%"},
                 {"output_throughput", "{} vs {} tokens/s out"},
                 {"goodput", "goodput {} vs {} req/s"}};
    else if (e.compare == "prefix_cache")
        shown = {{"ttft_p50_ms", "median TTFT {} vs {} ms"},
                 {"prefill_computed", "prompt tokens computed {} vs {}"},
                 {"tpot_p50_ms", "median TPOT {} vs {} ms"}};
    else if (e.compare == "kv_layout")
        // and what admitting more cost: requests sent back, prompts computed
        // again, fuller and slower passes (lesson 10 asks whether end-to-end
        // time and throughput came out worse)
        shown = {{"running_peak", "most running at once {} vs {}"},
                 // A mean over the run, of the memory set aside: not the block
                 // map's fullest moment, of the whole pool, drawn below it.
                 {"kv_token_share", "KV set aside holding tokens, on average, {}% vs {}%"},
                 {"preemptions", "preemptions {} vs {}"},
                 {"prefill_computed", "prompt tokens computed {} vs {}"},
                 {"tpot_p50_ms", "median TPOT {} vs {} ms"},
                 {"e2e_p50_ms", "median end-to-end {} vs {} ms"},
                 {"output_throughput", "{} vs {} tokens/s out"}};
    std::string line = tr(fmt::format("{} vs {}:", e.run_label, e.baseline_label));
    const auto add = [&](const char* format, double run, double baseline) {
        // A pair of measurements to the same three digits ("31.0% vs 24.7%",
        // not "31% vs 24.7%"); counts whole.
        const auto [a, b] = compared_text(run, baseline);
        std::string figure = tr(fmt::format(fmt::runtime(format), a, b));
        // A figure wraps as a whole: no-break spaces inside it.
        for (std::size_t at = figure.find(' '); at != std::string::npos; at = figure.find(' ', at))
            figure.replace(at, 1, "\u00a0");
        line += "  " + figure;
    };
    for (const Shown& s : shown)
        for (const TrafficFigure& f : traffic_figures())
            if (std::string_view(f.key) == s.key && (!f.needs_target || e.run->report.has_total(f.key)) &&
                f.measured(e.run->report) && f.measured(e.baseline->report))
                add(s.format, f.get(e.run->report), f.get(e.baseline->report));
    // Why TPOT moves with no pass shared: a decode pass right after a long
    // prefill is slower, and the cache shortens those prefills (lesson 11).
    if (e.compare == "prefix_cache") {
        const DecodePassCosts run = decode_pass_costs(e.run->steps), base = decode_pass_costs(e.baseline->steps);
        if (run.n_after_prefill > 0 && base.n_after_prefill > 0)
            add("decode pass right after a prefill {} vs {} ms", run.after_prefill_ms, base.after_prefill_ms);
    }
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::accent_rgb));
    text_wrapped(line);
    ImGui::PopStyleColor();
}

void draw_timeline(const ServingExhibit& e, ImVec2 avail) {
    plot::legend({{phase_rgb(Phase::queued), "queued"},
                  {phase_rgb(Phase::prefill), "prefill"},
                  {phase_rgb(Phase::decode), "decode"},
                  {phase_rgb(Phase::stalled), "stalled"},
                  {phase_rgb(Phase::preempted), "preempted"}},
                 true);
    double t_max = e.run->info.end_ms;  // the clock's axis starts at 0
    if (e.baseline) t_max = std::max(t_max, e.baseline->info.end_ms);
    const std::string label = e.run_label.empty() ? std::string("this run") : e.run_label;
    const float h = rest_height();
    if (!e.baseline) {
        draw_gantt(*e.run, label, t_max, ImVec2(avail.x, h));
        return;
    }
    draw_gantt(*e.run, label, t_max, ImVec2(avail.x, h / 2));
    draw_gantt(*e.baseline, e.baseline_label, t_max, ImVec2(avail.x, h / 2));
}

// ---- the KV block map ---------------------------------------------------------------------

constexpr std::uint32_t block_free_rgb = 0xF3F4F6;
constexpr std::uint32_t block_reserved_rgb = 0xFEF3C7;  // reserved up front (contiguous), not written yet
constexpr std::uint32_t block_cached_rgb = 0xC7D2FE;    // kept by the prefix cache only

// The blocks a map draws: a large pool of which a run used only the start
// (lesson 11: 19 of 256) is drawn to a little past the last block in use,
// in cells large enough to see an outline; both maps of a comparison alike.
int blocks_drawn(const KvSnapshot& s) {
    int last = -1;
    for (int i = 0; i < std::min(s.n_blocks, static_cast<int>(s.blocks.size())); ++i) {
        const KvBlockView& b = s.blocks[static_cast<std::size_t>(i)];
        if (!b.owners.empty() || b.cached) last = i;
    }
    for (const ContiguousRegion& r : s.regions) last = std::max(last, r.begin + r.size - 1);
    if (s.n_blocks <= 64) return s.n_blocks;
    return std::min(s.n_blocks, std::max(32, (last + 1 + 15) / 16 * 16 + 16));
}

void draw_block_map(const KvSnapshot& s, const std::string& label, ImVec2 size, int n_drawn) {
    const float line = ImGui::GetFontSize() * 0.85f;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    int n_reserved_empty = 0;  // a contiguous reservation's blocks no token has reached
    for (const KvBlockView& b : s.blocks) n_reserved_empty += b.reserved_for >= 0 && b.owners.empty();
    // The heading wraps in a narrow pane (a projector's 4:3, a long run label).
    // Reserved blocks look taken: the heading counts them apart.
    const std::string said =
        n_reserved_empty > 0
            ? fmt::format("{} at its fullest: {} of {} blocks hold tokens, {} reserved and empty, {} free", label,
                          s.n_used(), s.n_blocks, n_reserved_empty, s.n_blocks - s.n_used() - n_reserved_empty)
            : fmt::format("{} at its fullest: {} of {} blocks used, {} shared, {} kept by the cache only", label,
                          s.n_used(), s.n_blocks, s.n_shared(), s.n_cached_only());
    std::string head = tr(said);
    if (n_drawn < s.n_blocks) head += " " + std::string(tr(fmt::format("(the first {} drawn)", n_drawn)));
    const std::vector<std::string> heading = wrap_lines(ImGui::GetFont(), line, head, size.x);
    const float heading_h = static_cast<float>(heading.size()) * line * 1.2f;
    for (std::size_t k = 0; k < heading.size(); ++k)
        add_text(ImGui::GetWindowDrawList(), ImGui::GetFont(), line, ImVec2(p.x, p.y + static_cast<float>(k) * line * 1.2f),
                 theme::col(theme::text_rgb), heading[k].c_str());
    if (s.n_blocks == 0) return;
    plot::cell_grid(
        ImVec2(p.x, p.y + heading_h + line * 0.3f), ImVec2(size.x, size.y - heading_h - line * 0.4f), n_drawn,
        [&](int i) {
            const KvBlockView& b = s.blocks[static_cast<std::size_t>(i)];
            plot::Cell c;
            c.rgb = block_free_rgb;
            if (!b.owners.empty()) {
                c.rgb = plot::category_rgb(b.owners.front());
                // A partial block: the positions not yet written are set
                // aside all the same, as a reservation's are.
                if (b.filled > 0 && b.filled < s.block_size) {
                    c.solid = static_cast<float>(b.filled) / static_cast<float>(s.block_size);
                    c.rest_rgb = block_reserved_rgb;
                }
            } else if (b.cached) {
                c.rgb = block_cached_rgb;
            } else if (b.reserved_for >= 0) {  // whose run it is, along the bottom
                c.rgb = block_reserved_rgb;
                c.banded = true;
                c.band_rgb = plot::category_rgb(b.reserved_for);
            }
            // A shared prefix block: held by more than one owner (requests,
            // or a request and the prefix cache), as the heading counts them.
            c.outlined = b.refs > 1;
            return c;
        },
        theme::text_rgb);
}

// The legend names what the maps hold: a shared block, a block only the
// cache keeps and a contiguous reservation each only where one is drawn.
void blocks_legend(const std::vector<const KvSnapshot*>& maps) {
    bool shared = false, cached = false, runs = false;
    for (const KvSnapshot* s : maps) {
        shared = shared || s->n_shared() > 0;
        cached = cached || s->n_cached_only() > 0;
        runs = runs || s->contiguous;
    }
    // The first request's colour for a swatch: a grey one matched no cell.
    std::vector<std::pair<std::uint32_t, std::string>> entries = {{plot::category_rgb(0), "owned (colour = request)"}};
    if (shared) entries.emplace_back(theme::text_rgb, "outlined: shared prefix");
    if (cached) entries.emplace_back(block_cached_rgb, "cache only");
    entries.emplace_back(block_reserved_rgb, runs ? "reserved, empty (bottom edge: whose)" : "reserved, empty");
    entries.emplace_back(block_free_rgb, "free");
    plot::legend(entries, true);
}

void draw_blocks(const ServingExhibit& e, ImVec2 avail) {
    if (e.baseline) blocks_legend({&e.run->kv_peak, &e.baseline->kv_peak});
    else blocks_legend({&e.run->kv_peak});
    const float h = rest_height();
    const std::string label = e.run_label.empty() ? std::string("the pool") : e.run_label;
    int n_drawn = blocks_drawn(e.run->kv_peak);
    if (!e.baseline) {
        draw_block_map(e.run->kv_peak, label, ImVec2(avail.x, h), n_drawn);
        return;
    }
    n_drawn = std::max(n_drawn, blocks_drawn(e.baseline->kv_peak));
    draw_block_map(e.run->kv_peak, label, ImVec2(avail.x, h / 2), n_drawn);
    draw_block_map(e.baseline->kv_peak, e.baseline_label, ImVec2(avail.x, h / 2), n_drawn);
}

// ---- the queueing curve -------------------------------------------------------------------

// A curve drawn up to where it leaves the top of the chart, with an arrow
// there: off the scale, not levelling off (clamped, the hockey stick ran
// flat along the top edge).
void rising_curve(const plot::Frame& f, const std::vector<double>& xs, const std::vector<double>& ys,
                  std::uint32_t rgb, float thickness) {
    std::vector<double> x, y;
    bool left = false;
    for (std::size_t i = 0; i < std::min(xs.size(), ys.size()); ++i) {
        if (ys[i] <= f.y1) {
            x.push_back(xs[i]), y.push_back(ys[i]);
            continue;
        }
        if (!y.empty()) {  // where it crosses the top (at the last point when the next is infinite)
            const double t = std::isfinite(ys[i]) ? (f.y1 - y.back()) / (ys[i] - y.back()) : 0.0;
            x.push_back(x.back() + t * (xs[i] - x.back())), y.push_back(f.y1);
        }
        left = true;
        break;
    }
    plot::line(f, x, y, rgb, thickness, false);
    if (!left || x.empty()) return;
    const ImVec2 tip = f.at(x.back(), f.y1);
    const float a = ImGui::GetFontSize() * 0.3f;
    ImGui::GetWindowDrawList()->AddTriangleFilled(ImVec2(tip.x, tip.y - 2 * a), ImVec2(tip.x - a, tip.y - 0.5f * a),
                                                  ImVec2(tip.x + a, tip.y - 0.5f * a), theme::col(rgb));
}

// The measured service times, as the simulation draws from them: a
// histogram of the decode steps timed, their mean marked. Its spread is the
// c² beside it (0: every step alike, M/D/1; 1: as varied as M/M/1's). The
// slowest hundredth is left off the scale, counted at its right end: one
// stall of a busy machine squeezed every other bar into the first bin.
void draw_service_histogram(const QueueCurve& c, ImVec2 size) {
    std::vector<double> xs = c.service_samples_ms;
    if (xs.size() < 2 || size.y < ImGui::GetFontSize() * 4) return;
    std::sort(xs.begin(), xs.end());
    const double lo = xs.front();
    const double hi = xs[std::min(xs.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(xs.size())))];
    if (!(hi > lo)) return;
    // About √n bins: a few dozen steps in 24 bins left most of them empty.
    const int n_bins = std::clamp(static_cast<int>(std::lround(std::sqrt(static_cast<double>(xs.size())))), 5, 24);
    const double width = (hi - lo) / n_bins;
    std::vector<int> bins(static_cast<std::size_t>(n_bins), 0);
    int beyond = 0;
    for (double x : xs) {
        if (x > hi) ++beyond;
        else ++bins[static_cast<std::size_t>(std::min(n_bins - 1, static_cast<int>((x - lo) / width)))];
    }
    const int top = *std::max_element(bins.begin(), bins.end());
    plot::Frame f = chart(size, lo, hi, 0, top * 1.15);
    for (int b = 0; b < n_bins; ++b)
        if (bins[static_cast<std::size_t>(b)] > 0)
            plot::bar(f, lo + b * width, lo + (b + 1) * width, bins[static_cast<std::size_t>(b)], line_c_rgb);
    plot::x_axis(f, plot::nice_ticks(lo, hi, 4), "decode step, ms");
    plot::y_axis(f, "steps", std::vector<double>{static_cast<double>(top)});
    if (c.mean_service_ms >= lo && c.mean_service_ms <= hi)
        plot::vline(f, c.mean_service_ms, theme::text_rgb, fmt::format("mean {} ms", pretty_number(c.mean_service_ms, 3)));
    if (beyond > 0)
        plot::label(ImVec2(f.max.x, plot::above(f)), fmt::format("+{} slower, off the scale", beyond), theme::muted_rgb, 1,
                    0.8f);
    plot::outline(f, theme::pending_border_rgb);
}

void draw_queue(const ServingExhibit& e, ImVec2 avail) {
    const QueueCurve& c = *e.queue;
    const double s = c.mean_service_ms;
    if (s <= 0) return;
    plot::legend({{line_a_rgb, "M/D/1"}, {line_b_rgb, "M/M/1"}, {line_c_rgb, "measured steps"}});
    const double y_top = 20;  // service times: the hockey stick leaves the chart, on purpose
    // The two lines under the chart, measured as they will wrap: the chart
    // takes the rest.
    const double w = e.at_utilization.mean_wait_ms / s;
    const std::string at = tr(fmt::format("at \u03c1 = {:.2f}: a request waits {:.2f} service times ({:.3f} ms \u00b1 {:.3f}) "
                                          "for a {:.3f} ms decode step",
                                          e.utilization, w, e.at_utilization.mean_wait_ms, e.at_utilization.ci95_ms, s));
    std::string headroom;
    if (!c.headroom.empty()) {
        headroom = "headroom \u2014 wait within";
        // Each limit wraps whole: "5×:" at a line's end and "ρ ≤ 0.91" at
        // the next one's start read as two figures.
        for (const HeadroomRow& r : c.headroom)
            headroom += fmt::format("  {:g}\u00d7:\u00a0\u03c1\u00a0\u2264\u00a0{:.2f}", r.wait_limit_services,
                                    c.n_service_samples > 0 ? r.max_utilization_mg1 : r.max_utilization_md1);
    }
    headroom = tr(headroom);  // measured below as it will be drawn
    const float gap = ImGui::GetStyle().ItemSpacing.y;
    float below = text_wrapped_height(at, avail.x) + gap;
    if (!headroom.empty()) below += text_wrapped_height(headroom, avail.x) + gap;
    const float h = ImGui::GetContentRegionAvail().y - below;
    plot::Frame f = chart(ImVec2(avail.x, h), 0, 1, 0, y_top);
    f.clamp_y = true;
    plot::x_axis(f, {0, 0.2, 0.4, 0.6, 0.8, 1}, "utilization \u03c1");
    plot::y_axis(f, "mean wait, in service times", std::vector<double>{1, 5, 10, 20});
    std::vector<double> u, md, mm, mg;
    for (const QueueFormulaSample& q : c.formula)
        u.push_back(q.utilization), md.push_back(q.md1_ms / s), mm.push_back(q.mm1_ms / s), mg.push_back(q.mg1_ms / s);
    // The measured steps' curve first and wide: with steps this regular it
    // runs on M/D/1's, which is drawn thin on top of it.
    if (c.n_service_samples > 0) rising_curve(f, u, mg, line_c_rgb, 4.0f);
    rising_curve(f, u, mm, line_b_rgb, 2.0f);
    rising_curve(f, u, md, line_a_rgb, 1.5f);
    for (const QueuePoint& p : c.points) {  // the simulations, with their 95 % intervals
        const QueueSimResult* sims[] = {&p.deterministic, &p.exponential, p.empirical ? &*p.empirical : nullptr};
        const std::uint32_t rgb[] = {line_a_rgb, line_b_rgb, line_c_rgb};
        for (int k = 0; k < 3; ++k)
            if (sims[k]) plot::error_bar(f, p.utilization, sims[k]->mean_wait_ms / s, sims[k]->ci95_ms / s, rgb[k]);
    }
    // The utilization the knob picked, named: the lines under the chart speak of it.
    plot::vmarker(f, e.utilization, theme::bad_rgb, fmt::format("\u03c1 = {:.2f}", e.utilization), true);
    plot::dot(f, e.utilization, w, theme::bad_rgb);
    plot::outline(f, theme::pending_border_rgb);
    wrapped(at);
    if (!headroom.empty()) wrapped(headroom);
}

}  // namespace

const ServingExhibit* serving_exhibit(const app::Snapshot& s) {
    return dynamic_cast<const ServingExhibit*>(s.state.exhibit.get());
}

void draw_serving(const app::Snapshot& s, ViewState& v) {
    const Rect& r = v.layout.inspector;
    if (begin_panel("##serving", r)) {
        const ServingExhibit* e = serving_exhibit(s);
        // The later experiments (lessons 12–16): a title and a chart each.
        static const std::pair<const char*, const char*> later[] = {
            {"quantization", "Quantization"}, {"speculative", "Speculative decoding"}, {"cold_start", "Cold start"},
            {"bill", "The bill"},             {"waits", "What the user waits for"}, {"canary", "Canary and rollback"},
        };
        const char* later_title = nullptr;
        for (const auto& [name, title] : later)
            if (e && e->experiment == name) later_title = title;
        if (later_title) {
            panel_title(later_title);
        } else if (e && e->sweep) {
            panel_title("Batch sweep");
        } else if (e && e->queue) {
            panel_title("Queueing");
        }
        // Until the class picks one, the view that tells the run's story: the
        // block map when the comparison is about KV memory.
        const int view = v.serving_view >= 0 ? v.serving_view : e && e->about_memory() ? 1 : 0;
        if (e && !e->sweep && !e->queue && e->run) {
            panel_title(view == 0 ? "Scheduler timeline" : "KV blocks");
            ImGui::SameLine();
            if (ImGui::SmallButton(tr(view == 0 ? "KV blocks \u2192" : "timeline \u2192"))) v.serving_view = 1 - view;
        }
        ImGui::SameLine();
        if (ImGui::SmallButton(tr("inspector \u2192"))) v.right_tab = 0;
        const ImVec2 avail = ImGui::GetContentRegionAvail();
        if (later_title && e->experiment == "quantization") draw_quantization_chart(*e, avail);
        else if (later_title && e->experiment == "speculative") draw_speculative_chart(*e, avail);
        else if (later_title && e->experiment == "cold_start") draw_cold_start_chart(*e, avail);
        else if (later_title && e->experiment == "bill") draw_bill_chart(*e, avail);
        else if (later_title && e->experiment == "waits") draw_waits_chart(*e, avail);
        else if (later_title && e->experiment == "canary")
            draw_canary_chart(*e, avail, s.state.trace.last(Stage::postprocess) != nullptr);
        else if (e && e->sweep) draw_sweep(*e->sweep, avail, s.state.trace.last(Stage::output) != nullptr);
        else if (e && e->queue && !s.state.trace.last(Stage::output)) {
            // The forward pass times the steps and runs every simulation at
            // once; the curve waits for the raw output, so that the step
            // about the measurement does not show the hockey stick early.
            const QueueCurve& c = *e->queue;
            wrapped(fmt::format("service time: {} ms, the mean of {} decode steps timed (c\u00b2\u00a0=\u00a0{})",
                                pretty_number(c.mean_service_ms, 3), c.n_service_samples, pretty_number(c.service_scv, 2)));
            const float tail = ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
            draw_service_histogram(c, ImVec2(avail.x, ImGui::GetContentRegionAvail().y - tail));
            ImGui::TextDisabled("%s", tr("the queue's curve is drawn with the raw output"));
        } else if (e && e->queue) draw_queue(*e, avail);
        else if (e && e->run) {
            draw_comparison(*e);
            if (view == 0) draw_timeline(*e, ImGui::GetContentRegionAvail());
            else draw_blocks(*e, ImGui::GetContentRegionAvail());
        }
    }
    end_panel();
}

}  // namespace sixstep::ui
