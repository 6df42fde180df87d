// Speculative decoding (lesson 13), from the serving exhibit: per setting
// (k, temperature) the share of guesses accepted, the tokens one target pass
// produced beside its ceiling k + 1, and the speedup over the target alone
// with the break-even line at 1; settings asked to overlap that took turns
// are named under it.
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
#include "app/ui/theme.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::ui {

namespace {

// The break-even line at 1 across a one-series chart of grouped_bars, left
// out above a bar whose value (written just above its top) it would strike
// through: a value a little under 1. Its name is in the chart's heading — at
// the line's end it covered the last bar's value.
void break_even_line(const plot::Frame& f, const std::vector<double>& values) {
    const float font = ImGui::GetFontSize();
    const float line_y = f.py(1);
    double from = 0;
    for (std::size_t g = 0; g < values.size(); ++g) {
        const float above = f.py(std::min(values[g], f.y1)) - line_y;  // pixels from the line down to the bar's top
        if (above < -2 || above > font) continue;  // its value is written clear of the line
        const double bar_from = static_cast<double>(g) + 0.1, bar_to = static_cast<double>(g) + 0.9;
        if (bar_from > from) plot::segment(f, from, 1, bar_from, 1, theme::muted_rgb, 2.0f, true);
        from = bar_to;
    }
    if (from < f.x1) plot::segment(f, from, 1, f.x1, 1, theme::muted_rgb, 2.0f, true);
}

}  // namespace

void draw_speculative_chart(const serving::ServingExhibit& e, ImVec2 avail) {
    const auto& rows = e.speculative;
    if (rows.empty()) return;
    std::vector<std::string> names;
    // The ceiling in a mid grey: the pale one of empty KV cells vanished on a projector.
    plot::Series acc{"accepted", theme::lab_a_rgb, {}}, tpp{"tokens per pass", theme::lab_c_rgb, {}},
        ceiling{"k + 1", theme::pending_border_rgb, {}}, speedup{"speedup", theme::lab_b_rgb, {}};
    bool identical = true, greedy = false;
    for (const auto& r : rows) {
        names.push_back(fmt::format("k={} T={:g}", r.k, r.temperature));
        acc.values.push_back(100 * r.acceptance);
        tpp.values.push_back(r.tokens_per_pass);
        ceiling.values.push_back(r.k + 1);
        speedup.values.push_back(r.speedup);
        if (r.temperature == 0) identical = identical && r.identical, greedy = true;
    }
    // Settings asked to overlap that took turns instead (no CPU free for the
    // draft's thread) in some or all of their timed runs: their bars are not
    // the overlapped speedups the narration speaks of. One short line says
    // so (the inspector has each reason, with counts); when only some
    // settings took turns, "*" marks theirs under the speedup bars. A list of
    // the settings in the line wrapped to two lines in Chinese and pushed the
    // verdict out of a 1280×720 pane.
    std::vector<std::string> speedup_names = names;
    bool any_turns = false, every_run_of_every_row = true;
    for (const serving::SweepRow& r : rows) {
        any_turns = any_turns || r.n_declined > 0;
        every_run_of_every_row = every_run_of_every_row && r.n_declined > 0 && r.n_declined == r.n_timed;
    }
    if (!every_run_of_every_row)
        for (std::size_t i = 0; i < rows.size(); ++i)
            if (rows[i].n_declined > 0) speedup_names[i] += "*";
    const std::string took_turns = !any_turns ? ""
                                   : (every_run_of_every_row ? "" : "* ") +
                                         std::string(tr("took turns: no CPU free for the draft's thread"));
    // What checking k guesses cost, the narration's point: one pass of k + 1
    // rows in the target's own tokens, per k (its first row), near 1 only
    // where a pass waits on memory.
    std::string pass_costs;
    std::vector<int> ks_seen;
    for (const serving::SweepRow& r : rows) {
        if (std::find(ks_seen.begin(), ks_seen.end(), r.k) != ks_seen.end()) continue;
        ks_seen.push_back(r.k);
        pass_costs += fmt::format("{}k={} {:.1f}\u00d7", pass_costs.empty() ? "" : ", ", r.k, r.verify_pass_cost);
    }
    const std::string pass_line = tr(fmt::format("a verify pass, in target tokens: {}", pass_costs));
    const std::vector<std::pair<std::uint32_t, std::string>> legend = {{tpp.rgb, "tokens per target pass"},
                                                                        {ceiling.rgb, "at most k + 1"}};
    // The three charts share what the headings, the legend and the verdict
    // leave. On a wide pane the first two stand side by side (same groups,
    // half the width each) and the speedup takes the full width under them:
    // stacked three high, each was a strip 25 px tall at 1280x720.
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float spacing = ImGui::GetStyle().ItemSpacing.y;
    const float half = plot::side_width(avail.x);
    const bool beside = plot::side_by_side_fits(avail.x);
    const int legend_n = plot::legend_lines(legend, beside ? half : avail.x);
    const float turns_h = (any_turns ? text_wrapped_height(took_turns, avail.x) + spacing : 0.0f) +
                          text_wrapped_height(pass_line, avail.x) + spacing;
    float h = 0;
    if (beside) {
        // A heading's or the legend's lines above the pair, one heading and the verdict below.
        const float text_h = line * static_cast<float>(std::max(1, legend_n) + 2) + turns_h;
        h = std::max(70.0f, (avail.y - text_h - spacing * 3) / 2);
        plot::side_by_side(
            avail.x, h, std::max(1, legend_n),
            [&](int side) {
                if (side == 0) ImGui::TextUnformatted(tr("Guesses accepted, %"));
                else plot::legend(legend);
            },
            [&](int side, ImVec2 size) {
                if (side == 0) plot::grouped_bars(size, names, {acc}, "", 100);
                else plot::grouped_bars(size, names, {tpp, ceiling}, "");
            });
    } else {
        const float text_h = line * static_cast<float>(3 + legend_n) + turns_h;
        h = std::max(70.0f, (avail.y - text_h - spacing * 4) / 3);
        // Each chart's unit is in its heading or legend, not above its axis: on
        // charts this short it sat on the top tick's value.
        ImGui::TextUnformatted(tr("Guesses accepted, %"));
        plot::grouped_bars(ImVec2(avail.x, h), names, {acc}, "", 100);
        plot::legend(legend);
        plot::grouped_bars(ImVec2(avail.x, h), names, {tpp, ceiling}, "");
    }
    ImGui::TextUnformatted(tr("Speedup over the target alone (this machine); dashed: break-even, 1\u00d7"));
    double top = 1.2;  // the break-even line below the top
    for (double v : speedup.values) top = std::max(top, v * 1.1);
    const plot::Frame f = plot::grouped_bars(ImVec2(avail.x, h), speedup_names, {speedup}, "", plot::nice_ceiling(top));
    break_even_line(f, speedup.values);
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::muted_rgb));
    text_wrapped(pass_line);
    ImGui::PopStyleColor();
    if (any_turns) {
        ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::warn_rgb));
        text_wrapped(took_turns);
        ImGui::PopStyleColor();
    }
    if (!greedy) {
        ImGui::TextUnformatted(tr("no greedy row: sampled text is not compared with the target's"));
        return;
    }
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(identical ? theme::good_rgb : theme::bad_rgb));
    ImGui::TextUnformatted(tr(identical ? "greedy text identical to the target alone" : "greedy text DIFFERS from the target"));
    ImGui::PopStyleColor();
}

}  // namespace sixstep::ui
