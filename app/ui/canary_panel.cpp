// Inference vs serving vs deployment (lesson 16), from the serving exhibit:
// the monitored mean predicted minutes of each version per window of
// requests, the canary's launch and the rollback (or promotion) marked, and
// the traffic split — the canary's share of each window.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::ui {

void draw_canary_chart(const serving::ServingExhibit& e, ImVec2 avail, bool judged) {
    if (!e.canary || e.canary->windows.empty()) return;
    const serving::CanaryResult& r = *e.canary;
    std::vector<double> x1, m1, x2, m2, share;
    double y_max = 1;
    for (const serving::CanaryWindow& w : r.windows) {
        const double mid = (w.first + w.last) / 2.0;
        if (w.n_v1) x1.push_back(mid), m1.push_back(w.v1_mean);
        if (w.n_v2) x2.push_back(mid), m2.push_back(w.v2_mean);
        y_max = std::max({y_max, w.v1_mean, w.v2_mean});
        share.push_back(w.n_v1 + w.n_v2 ? 100.0 * w.n_v2 / (w.n_v1 + w.n_v2) : 0);
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float font = ImGui::GetFontSize();
    // Two charts, the split's heading, one request through each version, the
    // tally and the requests out of range.
    const float h = std::max(90.0f, (avail.y - line * 6) * 0.6f);
    plot::legend({{theme::lab_a_rgb, "v1 " + checksum_hex(r.v1.checksum)}, {theme::canary_rgb, "v2 " + checksum_hex(r.v2.checksum)}});
    const double n = static_cast<double>(r.n_requests);
    // Headroom above the lines: the markers' labels take the top two rows.
    const plot::Frame f = plot::begin(ImVec2(avail.x, h), 0, n, 0, plot::nice_ceiling(y_max * 1.3), font * 3.2f, font * 1.3f);
    plot::y_axis(f, "mean minutes");
    // Where "the first 100 requests" are: ticks along the run (the last
    // one's place is the run's length, written in full).
    std::vector<double> ticks;
    for (double t : plot::nice_ticks(0, n, 4))
        if (t > 0 && t < n * 0.85) ticks.push_back(t);
    plot::x_axis(f, ticks);
    plot::line(f, x1, m1, theme::lab_a_rgb);
    plot::line(f, x2, m2, theme::canary_rgb);
    // The verdict's line first: when it comes a few windows after the
    // canary ships, "canary ships" is written over its top, not through it.
    // The monitor's verdict once the class reads it (the postprocess stage,
    // lesson 16's "The canary and the monitor"): the raw output holds it, and
    // the step about inference raising no error showed the rollback early.
    const bool verdict = judged && (r.rolled_back || r.promoted);
    const std::uint32_t verdict_rgb = r.rolled_back ? theme::rollback_rgb : theme::good_rgb;
    if (verdict) plot::vline(f, r.decided_at, verdict_rgb);
    const float ships_end = plot::vline(f, r.params.baseline_requests, theme::muted_rgb, "canary ships");
    // Its label beside "canary ships" when it starts clear of it; else in
    // the line over the frame, right of the axis's unit (a row lower, on a
    // short chart, hid the v1 point under it); a row lower only when
    // neither has room.
    if (verdict) {  // the label alone: its line again would cross "canary ships"
        const char* what = r.rolled_back ? "rollback" : "promoted";
        const float x = f.px(static_cast<double>(r.decided_at)) + 3;
        const float unit_end = f.min.x + ImGui::CalcTextSize(tr("mean minutes")).x * 0.8f + font * 0.5f;
        const float w = ImGui::CalcTextSize(tr(what)).x * 0.8f;
        if (x >= ships_end + font * 0.5f) plot::label_on_chip(f, ImVec2(x, f.min.y), what, verdict_rgb, 0, 0.8f);
        else if (x >= unit_end && x + w <= f.max.x) plot::label(ImVec2(x, plot::above(f)), what, verdict_rgb, 0, 0.8f);
        else plot::label_on_chip(f, ImVec2(x, f.min.y + font * 0.96f), what, verdict_rgb, 0, 0.8f);
    }
    plot::label(ImVec2(f.max.x, f.max.y + 2), fmt::format("{} requests", count_text(r.n_requests)), theme::muted_rgb, 1, 0.8f);
    // The traffic split, window by window.
    const float h2 = std::max(50.0f, (avail.y - line * 6) * 0.3f);
    ImGui::TextUnformatted(tr("v2's share of each window's traffic"));
    // In percent on a fixed 0–100 scale: a 10 % canary looks the same at
    // every step, beside the 100 % of a promotion.
    // Under the frame, room for half of the 0's label (it sat on the line below).
    const plot::Frame g = plot::begin(ImVec2(avail.x, h2), 0, static_cast<double>(share.size()), 0, 100, font * 3.2f,
                                      font * 0.5f);
    plot::y_axis(g, "%", 2);
    for (std::size_t i = 0; i < share.size(); ++i)
        if (share[i] > 0) plot::bar(g, static_cast<double>(i) + 0.1, static_cast<double>(i) + 0.9, share[i], theme::canary_rgb);
    // Inference: the same request through each version (lesson 16 speaks of
    // v2's few minutes against v1's 11), its answer after the sentence's
    // "Estimated delivery time: ".
    const auto minutes = [](const std::string& text) -> std::string {
        const std::size_t colon = text.rfind(": ");
        const auto lead = colon == std::string::npos ? std::nullopt : leading_number(std::string_view(text).substr(colon + 2));
        return lead ? std::string(lead->number) : text;
    };
    text_wrapped(tr(fmt::format("one request (3 km, no congestion): v1 {} min \u00b7 v2 {} min", minutes(r.inference_v1),
                                minutes(r.inference_v2))));
    text_wrapped(tr(fmt::format("answered: v1 {}, v2 {}; lost {}", r.answered_v1, r.answered_v2, r.lost)));
    // The monitor's second measure, beside its first (the chart's means).
    if (judged) text_wrapped(tr(fmt::format("outside the training ranges: v1 {} of {}, v2 {} of {}", r.tally_v1.out_of_range,
                                r.tally_v1.answered, r.tally_v2.out_of_range, r.tally_v2.answered)));
}

}  // namespace sixstep::ui
