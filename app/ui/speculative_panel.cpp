// Speculative decoding (lesson 13), from the serving exhibit: per setting
// (k, temperature) the share of guesses accepted, the tokens one target pass
// produced beside its ceiling k + 1, and the speedup over the target alone
// with the break-even line at 1.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::ui {

void draw_speculative_chart(const serving::ServingExhibit& e, ImVec2 avail) {
    const auto& rows = e.speculative;
    if (rows.empty()) return;
    std::vector<std::string> names;
    plot::Series acc{"accepted", theme::lab_a_rgb, {}}, tpp{"tokens per pass", theme::lab_c_rgb, {}},
        ceiling{"k + 1", theme::kv_empty_rgb, {}}, speedup{"speedup", theme::lab_b_rgb, {}};
    bool identical = true;
    for (const auto& r : rows) {
        names.push_back(fmt::format("k={} T={:g}", r.k, r.temperature));
        acc.values.push_back(100 * r.acceptance);
        tpp.values.push_back(r.tokens_per_pass);
        ceiling.values.push_back(r.k + 1);
        speedup.values.push_back(r.speedup);
        if (r.temperature == 0) identical = identical && r.identical;
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float h = std::max(70.0f, (avail.y - line * 6.5f) / 3);
    ImGui::TextUnformatted("Guesses accepted, %");
    plot::grouped_bars(ImVec2(avail.x, h), names, {acc}, "%", 100);
    plot::legend({{tpp.rgb, "tokens per target pass"}, {ceiling.rgb, "at most k + 1"}});
    plot::grouped_bars(ImVec2(avail.x, h), names, {tpp, ceiling}, "tokens");
    ImGui::TextUnformatted("Speedup over the target alone (this machine)");
    double top = 1.2;  // the break-even line below the top
    for (double v : speedup.values) top = std::max(top, v * 1.1);
    const plot::Frame f = plot::grouped_bars(ImVec2(avail.x, h), names, {speedup}, "\u00d7", plot::nice_ceiling(top));
    plot::hline(f, 1, theme::muted_rgb, "break-even");
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(identical ? theme::good_rgb : theme::bad_rgb));
    ImGui::TextUnformatted(identical ? "greedy text identical to the target alone" : "greedy text DIFFERS from the target");
    ImGui::PopStyleColor();
}

}  // namespace sixstep::ui
