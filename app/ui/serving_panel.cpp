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
// Charts are plain ImDrawList calls: a chart here is axes, a few polylines
// and markers, and every number on it comes from the exhibit.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::ui {

namespace {

using namespace sixstep::serving;

constexpr std::uint32_t line_a_rgb = 0x1D4ED8;  // the first series: throughput, this run, M/D/1
constexpr std::uint32_t line_b_rgb = 0xB45309;  // the second: TPOT, M/M/1
constexpr std::uint32_t line_c_rgb = 0x15803D;  // the third: the measured steps
constexpr std::uint32_t grid_rgb = 0xE5E7EB;

// A chart's frame: maps data to pixels inside the plot area, with its axes
// drawn and labelled.
struct Chart {
    ImDrawList* dl = nullptr;
    ImVec2 p0, p1;                  // the plot area
    double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
    bool log_x = false;

    float px(double x) const {
        const double t = log_x ? (std::log2(x) - std::log2(x0)) / (std::log2(x1) - std::log2(x0)) : (x - x0) / (x1 - x0);
        return p0.x + static_cast<float>(t) * (p1.x - p0.x);
    }
    float py(double y) const {
        const double t = std::clamp((y - y0) / (y1 - y0), -0.02, 1.02);
        return p1.y - static_cast<float>(t) * (p1.y - p0.y);
    }
    ImVec2 at(double x, double y) const { return ImVec2(px(x), py(y)); }
};

void text_at(ImDrawList* dl, ImVec2 p, std::uint32_t rgb, const std::string& t) {
    const Fonts& F = fonts();
    dl->AddText(F.body, F.body->FontSize * 0.85f, p, theme::col(rgb), t.c_str());
}

float text_w(const std::string& t) {
    const Fonts& F = fonts();
    return F.body->CalcTextSizeA(F.body->FontSize * 0.85f, 1e9f, 0, t.c_str()).x;
}

// Reserves size, draws the frame, the x ticks given and a y label each side.
Chart begin_chart(ImVec2 size, double x0, double x1, double y0, double y1, bool log_x,
                  const std::vector<double>& x_ticks, const std::string& x_label, const std::string& y_label) {
    const float line = fonts().body->FontSize * 0.85f;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    Chart c;
    c.dl = ImGui::GetWindowDrawList();
    c.p0 = ImVec2(p.x + line * 3.2f, p.y + line * 1.4f);
    c.p1 = ImVec2(p.x + size.x - line * 3.2f, p.y + size.y - line * 2.4f);
    c.x0 = x0, c.x1 = x1, c.y0 = y0, c.y1 = y1, c.log_x = log_x;
    c.dl->AddRectFilled(c.p0, c.p1, theme::col(0xF8FAFC));
    for (double x : x_ticks) {
        const float X = c.px(x);
        c.dl->AddLine(ImVec2(X, c.p0.y), ImVec2(X, c.p1.y), theme::col(grid_rgb));
        const std::string t = fmt::format("{:g}", x);
        text_at(c.dl, ImVec2(X - text_w(t) / 2, c.p1.y + 2), theme::muted_rgb, t);
    }
    c.dl->AddRect(c.p0, c.p1, theme::col(theme::pending_border_rgb));
    text_at(c.dl, ImVec2((c.p0.x + c.p1.x - text_w(x_label)) / 2, c.p1.y + line + 2), theme::muted_rgb, x_label);
    text_at(c.dl, ImVec2(c.p0.x, p.y), theme::muted_rgb, y_label);
    return c;
}

void polyline(const Chart& c, const std::vector<double>& xs, const std::vector<double>& ys, std::uint32_t rgb,
              float width = 2.5f, bool dots = true) {
    for (std::size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
        if (i > 0) c.dl->AddLine(c.at(xs[i - 1], ys[i - 1]), c.at(xs[i], ys[i]), theme::col(rgb), width);
        if (dots) c.dl->AddCircleFilled(c.at(xs[i], ys[i]), width + 1.5f, theme::col(rgb));
    }
}

void dashed(const Chart& c, ImVec2 a, ImVec2 b, std::uint32_t rgb) {
    const float len = std::hypot(b.x - a.x, b.y - a.y);
    for (float t = 0; t < len; t += 12) {
        const float u0 = t / len, u1 = std::min(t + 6, len) / len;
        c.dl->AddLine(ImVec2(a.x + (b.x - a.x) * u0, a.y + (b.y - a.y) * u0),
                      ImVec2(a.x + (b.x - a.x) * u1, a.y + (b.y - a.y) * u1), theme::col(rgb), 1.5f);
    }
}

void legend(const std::vector<std::pair<std::uint32_t, std::string>>& items) {
    const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
    bool first = true;
    for (const auto& [rgb, label] : items) {
        const std::string t = "\u25cf " + label;
        if (!first) {  // on the same line while it fits
            ImGui::SameLine();
            if (ImGui::GetCursorScreenPos().x + ImGui::CalcTextSize(t.c_str()).x > right) ImGui::NewLine();
        }
        first = false;
        ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(rgb));
        ImGui::TextUnformatted(t.c_str());
        ImGui::PopStyleColor();
    }
}

// ---- the batch sweep --------------------------------------------------------------

void draw_sweep(const BatchSweepResult& r, ImVec2 avail) {
    if (r.points.empty()) return;
    double tps_max = 0, ms_max = 0;
    std::vector<double> xs, tps, ms, ticks;
    for (const BatchSweepPoint& p : r.points) {
        xs.push_back(p.n_batch), tps.push_back(p.tokens_per_s), ms.push_back(p.step_ms), ticks.push_back(p.n_batch);
        tps_max = std::max(tps_max, p.tokens_per_s), ms_max = std::max(ms_max, p.step_ms);
    }
    const bool log_x = xs.size() > 1 && xs.back() / xs.front() > 8;
    const double x0 = xs.front(), x1 = xs.size() > 1 ? xs.back() : xs.front() + 1;
    legend({{line_a_rgb, "decode tokens/s"}, {line_b_rgb, "TPOT (one step), ms"}});
    const float h = std::max(100.0f, (avail.y - ImGui::GetTextLineHeightWithSpacing() * 4.5f) / 2);
    Chart a = begin_chart(ImVec2(avail.x, h), x0, x1, 0, tps_max * 1.1, log_x, ticks, "batch size", "tokens/s");
    text_at(a.dl, ImVec2(a.p0.x - text_w(fmt::format("{:.0f}", tps_max)) - 4, a.py(tps_max) - 8), theme::muted_rgb,
            fmt::format("{:.0f}", tps_max));
    if (r.knee.fitted) {  // the two lines of the fit, over their own points
        for (const FitLine& f : {r.knee.rising, r.knee.tail})
            dashed(a, a.at(f.x0, f.at(f.x0)), a.at(f.x1, f.at(f.x1)), theme::muted_rgb);
    }
    polyline(a, xs, tps, line_a_rgb);
    if (r.knee.found) {
        const float X = a.px(r.knee.x);
        a.dl->AddLine(ImVec2(X, a.p0.y), ImVec2(X, a.p1.y), theme::col(theme::bad_rgb), 2.0f);
        text_at(a.dl, ImVec2(X + 4, a.p0.y + 2), theme::bad_rgb, fmt::format("knee: batch {:g}", r.knee.x));
    }
    Chart b = begin_chart(ImVec2(avail.x, h), x0, x1, 0, ms_max * 1.1, log_x, ticks, "batch size", "TPOT ms");
    text_at(b.dl, ImVec2(b.p0.x - text_w(fmt::format("{:.3g}", ms_max)) - 4, b.py(ms_max) - 8), theme::muted_rgb,
            fmt::format("{:.3g}", ms_max));
    polyline(b, xs, ms, line_b_rgb);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(r.knee.verdict.c_str());
    ImGui::PopTextWrapPos();
}

// ---- the scheduler's timeline -----------------------------------------------------------

std::uint32_t phase_rgb(Phase p) {
    switch (p) {
        case Phase::queued: return 0xD1D5DB;
        case Phase::prefill: return 0xF59E0B;
        case Phase::decode: return 0x2563EB;
        case Phase::stalled: return 0xFDE68A;
        case Phase::preempted: return 0xDC2626;
    }
    return 0x000000;
}

void draw_gantt(const TrafficRun& run, const std::string& label, double t_max, ImVec2 size) {
    const float line = fonts().body->FontSize * 0.85f;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    text_at(dl, p, theme::text_rgb,
            fmt::format("{}: {} requests, {:.1f} ms of virtual time", label, run.requests.size(), run.info.duration_ms));
    const ImVec2 a(p.x + line * 2.5f, p.y + line * 1.4f), b(p.x + size.x - 4, p.y + size.y - line * 1.3f);
    dl->AddRectFilled(a, b, theme::col(0xF8FAFC));
    const int n = static_cast<int>(run.requests.size());
    if (n == 0 || t_max <= 0) return;
    const float row = (b.y - a.y) / static_cast<float>(n);
    auto X = [&](double t) { return a.x + static_cast<float>(t / t_max) * (b.x - a.x); };
    for (int i = 0; i < n; ++i) {
        const float y0 = a.y + row * static_cast<float>(i), y1 = y0 + std::max(1.0f, row - (row > 4 ? 1.0f : 0.0f));
        for (const PhaseSpan& s : run.requests[static_cast<std::size_t>(i)].spans)
            dl->AddRectFilled(ImVec2(X(s.t0_ms), y0), ImVec2(std::max(X(s.t1_ms), X(s.t0_ms) + 1), y1),
                              theme::col(phase_rgb(s.phase)));
    }
    dl->AddRect(a, b, theme::col(theme::pending_border_rgb));
    text_at(dl, ImVec2(p.x, a.y), theme::muted_rgb, "req");
    const std::string end = fmt::format("{:.0f} ms", t_max);
    text_at(dl, ImVec2(b.x - text_w(end), b.y + 1), theme::muted_rgb, end);
    text_at(dl, ImVec2(a.x, b.y + 1), theme::muted_rgb, "0");
}

void draw_timeline(const ServingExhibit& e, ImVec2 avail) {
    legend({{phase_rgb(Phase::queued), "queued"},
            {phase_rgb(Phase::prefill), "prefill"},
            {phase_rgb(Phase::decode), "decode"},
            {phase_rgb(Phase::stalled), "stalled"},
            {phase_rgb(Phase::preempted), "preempted"}});
    double t_max = e.run->info.duration_ms;
    if (e.baseline) t_max = std::max(t_max, e.baseline->info.duration_ms);
    const std::string label = e.run_label.empty() ? std::string("this run") : e.run_label;
    const float h = avail.y - ImGui::GetTextLineHeightWithSpacing() * 1.5f;
    if (!e.baseline) {
        draw_gantt(*e.run, label, t_max, ImVec2(avail.x, h));
        return;
    }
    draw_gantt(*e.run, label, t_max, ImVec2(avail.x, h / 2));
    draw_gantt(*e.baseline, e.baseline_label, t_max, ImVec2(avail.x, h / 2));
}

// ---- the KV block map ---------------------------------------------------------------------

std::uint32_t owner_rgb(int request) {
    // Well-spread hues by the golden angle; mid lightness so text stays legible.
    const float h = std::fmod(static_cast<float>(request) * 0.618034f, 1.0f);
    float r, g, b;
    ImGui::ColorConvertHSVtoRGB(h, 0.55f, 0.85f, r, g, b);
    return (static_cast<std::uint32_t>(r * 255) << 16) | (static_cast<std::uint32_t>(g * 255) << 8) |
           static_cast<std::uint32_t>(b * 255);
}

void draw_block_map(const KvSnapshot& s, const std::string& label, ImVec2 size) {
    const float line = fonts().body->FontSize * 0.85f;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    text_at(dl, p, theme::text_rgb,
            fmt::format("{} at its fullest: {} of {} blocks used, {} shared, {} kept by the cache only", label,
                        s.n_used(), s.n_blocks, s.n_shared(), s.n_cached_only()));
    if (s.n_blocks == 0) return;
    const ImVec2 a(p.x, p.y + line * 1.5f);
    const float w = size.x, h = size.y - line * 1.6f;
    // The largest square cell that fits every block.
    int cols = 1;
    float cell = 0;
    for (int c = 1; c <= s.n_blocks; ++c) {
        const int rows = (s.n_blocks + c - 1) / c;
        const float side = std::min(w / static_cast<float>(c), h / static_cast<float>(rows));
        if (side > cell) cell = side, cols = c;
    }
    std::vector<bool> reserved(static_cast<std::size_t>(s.n_blocks), false);
    for (const ContiguousRegion& r : s.regions)
        for (int i = r.begin; i < r.begin + r.size && i < s.n_blocks; ++i) reserved[static_cast<std::size_t>(i)] = true;
    for (int i = 0; i < s.n_blocks; ++i) {
        const KvBlockView& b = s.blocks[static_cast<std::size_t>(i)];
        const float x = a.x + cell * static_cast<float>(i % cols), y = a.y + cell * static_cast<float>(i / cols);
        const ImVec2 q0(x + 1, y + 1), q1(x + cell - 1, y + cell - 1);
        std::uint32_t fill = reserved[static_cast<std::size_t>(i)] ? 0xFEF3C7 : 0xF3F4F6;  // reserved but empty / free
        if (!b.owners.empty()) fill = owner_rgb(b.owners.front());
        else if (b.cached) fill = 0xC7D2FE;
        dl->AddRectFilled(q0, q1, theme::col(fill));
        if (b.filled > 0 && b.filled < s.block_size && !b.owners.empty()) {  // a partial block: how full
            const float f = static_cast<float>(b.filled) / static_cast<float>(s.block_size);
            dl->AddRectFilled(ImVec2(q0.x, q1.y - (q1.y - q0.y) * (1 - f)), q1, theme::col(0xFFFFFF, 150));
        }
        if (b.owners.size() > 1)  // shared prefix block: adopted by several requests
            dl->AddRect(q0, q1, theme::col(theme::text_rgb), 0, 0, std::max(2.0f, cell / 8));
    }
}

void draw_blocks(const ServingExhibit& e, ImVec2 avail) {
    legend({{0x6B7280, "owned (colour = request)"},
            {theme::text_rgb, "outlined: shared prefix"},
            {0xC7D2FE, "cache only"},
            {0xFEF3C7, "reserved, empty"},
            {0xE5E7EB, "free"}});
    const float h = avail.y - ImGui::GetTextLineHeightWithSpacing() * 1.5f;
    const std::string label = e.run_label.empty() ? std::string("the pool") : e.run_label;
    if (!e.baseline) {
        draw_block_map(e.run->kv_peak, label, ImVec2(avail.x, h));
        return;
    }
    draw_block_map(e.run->kv_peak, label, ImVec2(avail.x, h / 2));
    draw_block_map(e.baseline->kv_peak, e.baseline_label, ImVec2(avail.x, h / 2));
}

// ---- the queueing curve -------------------------------------------------------------------

void draw_queue(const ServingExhibit& e, ImVec2 avail) {
    const QueueCurve& c = *e.queue;
    const double s = c.mean_service_ms;
    if (s <= 0) return;
    legend({{line_a_rgb, "M/D/1"}, {line_b_rgb, "M/M/1"}, {line_c_rgb, "measured steps"}});
    const double y_top = 20;  // service times: the hockey stick leaves the chart, on purpose
    const float h = avail.y - ImGui::GetTextLineHeightWithSpacing() * 3.5f;
    Chart ch = begin_chart(ImVec2(avail.x, h), 0, 1, 0, y_top, false, {0, 0.2, 0.4, 0.6, 0.8, 1}, "utilization ρ",
                           "mean wait, in service times");
    for (double y : {1.0, 5.0, 10.0, 20.0}) {
        const std::string t = fmt::format("{:g}", y);
        text_at(ch.dl, ImVec2(ch.p0.x - text_w(t) - 4, ch.py(y) - 8), theme::muted_rgb, t);
        ch.dl->AddLine(ImVec2(ch.p0.x, ch.py(y)), ImVec2(ch.p1.x, ch.py(y)), theme::col(grid_rgb));
    }
    std::vector<double> u, md, mm, mg;
    for (const QueueFormulaSample& f : c.formula) {
        u.push_back(f.utilization), md.push_back(f.md1_ms / s), mm.push_back(f.mm1_ms / s), mg.push_back(f.mg1_ms / s);
    }
    polyline(ch, u, md, line_a_rgb, 2.0f, false);
    polyline(ch, u, mm, line_b_rgb, 2.0f, false);
    if (c.n_service_samples > 0) polyline(ch, u, mg, line_c_rgb, 2.0f, false);
    for (const QueuePoint& p : c.points) {  // the simulations, with their 95 % intervals
        const QueueSimResult* sims[] = {&p.deterministic, &p.exponential, p.empirical ? &*p.empirical : nullptr};
        const std::uint32_t rgb[] = {line_a_rgb, line_b_rgb, line_c_rgb};
        for (int k = 0; k < 3; ++k) {
            if (!sims[k]) continue;
            const double w = sims[k]->mean_wait_ms / s, ci = sims[k]->ci95_ms / s;
            const float X = ch.px(p.utilization);
            ch.dl->AddLine(ImVec2(X, ch.py(w - ci)), ImVec2(X, ch.py(w + ci)), theme::col(rgb[k]), 1.5f);
            ch.dl->AddCircle(ImVec2(X, ch.py(w)), 5, theme::col(rgb[k]), 12, 2);
        }
    }
    // The utilization the knob picked.
    const double w = e.at_utilization.mean_wait_ms / s;
    const float X = ch.px(e.utilization);
    ch.dl->AddLine(ImVec2(X, ch.p0.y), ImVec2(X, ch.p1.y), theme::col(theme::bad_rgb), 2.0f);
    ch.dl->AddCircleFilled(ImVec2(X, ch.py(w)), 6, theme::col(theme::bad_rgb));
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(fmt::format("at ρ = {:.2f}: a request waits {:.2f} service times ({:.3f} ms ± {:.3f}) for a "
                                       "{:.3f} ms decode step",
                                       e.utilization, w, e.at_utilization.mean_wait_ms, e.at_utilization.ci95_ms, s)
                               .c_str());
    if (!c.headroom.empty()) {
        std::string line = "headroom — wait within";
        for (const HeadroomRow& r : c.headroom)
            line += fmt::format("  {:g}×: ρ ≤ {:.2f}", r.wait_limit_services,
                                c.n_service_samples > 0 ? r.max_utilization_mg1 : r.max_utilization_md1);
        ImGui::TextUnformatted(line.c_str());
    }
    ImGui::PopTextWrapPos();
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
        } else if (e && e->run) {
            panel_title(v.serving_view == 0 ? "Scheduler timeline" : "KV blocks");
            ImGui::SameLine();
            if (ImGui::SmallButton(v.serving_view == 0 ? "KV blocks \u2192" : "timeline \u2192"))
                v.serving_view = 1 - v.serving_view;
        }
        ImGui::SameLine();
        if (ImGui::SmallButton("inspector \u2192")) v.right_tab = 0;
        const ImVec2 avail = ImGui::GetContentRegionAvail();
        if (later_title && e->experiment == "quantization") draw_quantization_chart(*e, avail);
        else if (later_title && e->experiment == "speculative") draw_speculative_chart(*e, avail);
        else if (later_title && e->experiment == "cold_start") draw_cold_start_chart(*e, avail);
        else if (later_title && e->experiment == "bill") draw_bill_chart(*e, avail);
        else if (later_title && e->experiment == "waits") draw_waits_chart(*e, avail);
        else if (later_title && e->experiment == "canary") draw_canary_chart(*e, avail);
        else if (e && e->sweep) draw_sweep(*e->sweep, avail);
        else if (e && e->queue) draw_queue(*e, avail);
        else if (e && e->run && v.serving_view == 0) draw_timeline(*e, avail);
        else if (e && e->run) draw_blocks(*e, avail);
    }
    end_panel();
}

}  // namespace sixstep::ui
