// The bill (lesson 14), from the serving exhibit: cumulative inference FLOPs
// against the one-off training FLOPs over the first days of the model's
// life, the crossover day marked, the training's share of each request, and
// what one request costs as the load is shared by more of them.
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

void draw_bill_chart(const serving::ServingExhibit& e, ImVec2 avail) {
    if (!e.bill) return;
    const serving::BillResult& b = *e.bill;
    // Days shown: the whole life, or four times the crossover when that comes early.
    const double days = std::min(b.params.days, std::max(1.0, 4 * b.crossover_day));
    // FLOPs in the largest power of 1000 that keeps the axis' numbers short.
    const double top = std::max(b.train_flops, b.inference_flops_per_day * days) * 1.05;
    static const std::pair<double, const char*> units[] = {{1e18, "EFLOP"}, {1e15, "PFLOP"}, {1e12, "TFLOP"},
                                                            {1e9, "GFLOP"},  {1e6, "MFLOP"},  {1, "FLOP"}};
    double scale = 1;
    const char* unit = "FLOP";
    for (const auto& [s, u] : units)
        if (top >= s) {
            scale = s, unit = u;
            break;
        }
    const double y_max = plot::nice_ceiling(top / scale);
    // Under the chart: two lines, then a bar per request count, in two
    // columns and a smaller face (secondary to the chart; seven rows at the
    // body size left the chart no room at 1280x720).
    constexpr float small = 0.85f;
    const std::size_t rows = (b.load_once.size() + 1) / 2;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float small_line = ImGui::GetTextLineHeight() * small + ImGui::GetStyle().ItemSpacing.y;
    const float h = std::max(100.0f, avail.y - line * 5.0f - small_line * static_cast<float>(rows));
    plot::legend({{theme::lab_a_rgb, "inference, cumulative"}, {theme::lab_b_rgb, "training (once)"}});
    const float font = ImGui::GetFontSize();
    const plot::Frame f = plot::begin(ImVec2(avail.x, h), 0, days, 0, y_max, font * 3.2f, font * 1.3f);
    plot::y_axis(f, unit);
    plot::line(f, {0, days}, {0, b.inference_flops_per_day * days / scale}, theme::lab_a_rgb, 2.5f, false);
    // The crossover's "day …" sits right of its line, at the top: past the
    // middle it met the training line's label at the right end ("day 24.66·N·D").
    const bool crossover_late = b.crossover_day <= days && b.crossover_day > days / 2;
    plot::hline(f, b.train_flops / scale, theme::lab_b_rgb, "6\u00b7N\u00b7D", crossover_late ? 0.0f : 1.0f);
    if (b.crossover_day <= days) plot::vline(f, b.crossover_day, theme::bad_rgb, fmt::format("day {:.3g}", b.crossover_day));
    plot::label(ImVec2(f.max.x, f.max.y + 2), serving::days_text(fmt::format("{:.3g}", days), days), theme::muted_rgb, 1, 0.8f);
    text_wrapped(tr(fmt::format("after {} inference is {:.3g}\u00d7 training",
                                serving::days_text(fmt::format("{:g}", b.params.days), b.params.days),
                                          b.inference_to_training)));
    // What a request owes the training: it is a few requests' worth when few are served.
    text_wrapped(tr(fmt::format("over its {} requests, training is {}\u00d7 a request's own compute",
                                count_text(b.params.requests_per_day * b.params.days),  // "3,650,000"
                                pretty_number(b.training_share_per_request, 3))));
    ImGui::TextUnformatted(tr("load once, serve many: the load's share of each request's cost"));
    ImGui::SetWindowFontScale(small);
    std::vector<std::string> shares;
    float column = 0;  // the second column starts after the first's widest row
    const float bar_w = avail.x * 0.1f, gap = ImGui::GetStyle().ItemSpacing.x;
    for (std::size_t i = 0; i < b.load_once.size(); ++i) {
        const serving::LoadOncePoint& p = b.load_once[i];
        const std::string share = decimal_text(100 * p.load_share, 2);
        shares.push_back(p.n_requests == 1 ? tr(fmt::format("{}% of 1 request", share))
                                           : tr(fmt::format("{}% over {} requests", share, short_count_text(p.n_requests))));
        if (i < rows) column = std::max(column, bar_w + gap + ImGui::CalcTextSize(shares.back().c_str()).x + 2 * gap);
    }
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t i = r; i < b.load_once.size(); i += rows) {  // down the first column, then the second
            if (i != r) ImGui::SameLine(ImGui::GetStyle().WindowPadding.x + column);
            plot::hbar(bar_w, static_cast<float>(b.load_once[i].load_share), theme::lab_b_rgb);
            ImGui::SameLine();
            ImGui::TextUnformatted(shares[i].c_str());
        }
    ImGui::SetWindowFontScale(1.0f);
}

}  // namespace sixstep::ui
