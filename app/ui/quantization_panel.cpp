// Quantization (lesson 12), from the serving exhibit: per weight type the
// bytes one decode step reads, the decode rate measured beside the rate the
// bytes alone predict, and the quality kept (perplexity, KL, top-1 agreement).
#include <algorithm>
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

void draw_quantization_chart(const serving::ServingExhibit& e, ImVec2 avail) {
    const auto& rows = e.quantization;
    if (rows.empty()) return;
    std::vector<std::string> types;
    // Bytes in grey: in the measured series' blue, beside the legend of
    // tokens/s, the bars read as tokens/s.
    plot::Series mb{"bytes per decode step, MB", theme::muted_rgb, {}};
    plot::Series measured{"measured", theme::lab_a_rgb, {}}, predicted{"predicted from bytes", theme::lab_b_rgb, {}};
    for (const auto& r : rows) {
        types.push_back(r.type);
        mb.values.push_back(r.step_bytes / 1e6);
        measured.values.push_back(r.decode_tok_s);
        predicted.values.push_back(r.predicted_tok_s);
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    // The quality table in a smaller face (the charts come first): a row is
    // its text, the cell padding and a border.
    constexpr float small = 0.85f;
    const float row = ImGui::GetTextLineHeight() * small + 2 * ImGui::GetStyle().CellPadding.y + 1;
    const float table_h = row * static_cast<float>(rows.size() + 1);
    const std::vector<std::pair<std::uint32_t, std::string>> legend = {
        {measured.rgb, "decode tokens/s, measured"}, {predicted.rgb, "predicted from bytes alone"}};
    // On a wide pane the two charts stand side by side (stacked, each was a
    // strip 35 px tall at 1280x720); else one under the other.
    if (plot::side_by_side_fits(avail.x)) {
        const float half = plot::side_width(avail.x);
        const int head = std::max(1, plot::legend_lines(legend, half));
        const float h = std::max(90.0f, avail.y - line * (static_cast<float>(head) + 1.5f) - table_h);
        plot::side_by_side(
            avail.x, h, head,
            [&](int side) {
                if (side == 0) ImGui::TextUnformatted(tr("Weight bytes read per decode step"));
                else plot::legend(legend);
            },
            [&](int side, ImVec2 size) {
                if (side == 0) plot::grouped_bars(size, types, {mb}, "MB");
                else plot::grouped_bars(size, types, {measured, predicted}, "tok/s");
            });
    } else {
        const float h = std::max(90.0f, (avail.y - line * 3.5f - table_h) / 2);
        ImGui::TextUnformatted(tr("Weight bytes read per decode step"));
        plot::grouped_bars(ImVec2(avail.x, h), types, {mb}, "MB");
        plot::legend(legend);
        plot::grouped_bars(ImVec2(avail.x, h), types, {measured, predicted}, "tok/s");
    }
    ImGui::TextUnformatted(tr("Quality on the held-out stories"));
    // A table, so the three measures line up under their names; KL against
    // the first row is tiny, and written as a power of ten a class can read.
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchSame;
    ImGui::SetWindowFontScale(small);
    if (!ImGui::BeginTable("##quality", 4, flags)) return ImGui::SetWindowFontScale(1);
    ImGui::TableSetupColumn(tr("weight type"));
    ImGui::TableSetupColumn(tr("perplexity"));
    ImGui::TableSetupColumn(tr("KL (nats)"));
    ImGui::TableSetupColumn(tr("top-1 same"));
    ImGui::TableHeadersRow();
    for (const auto& r : rows) {
        ImGui::TableNextRow();
        for (const std::string& cell : {r.type, fmt::format("{:.4f}", r.perplexity), shown_text(r.kl_mean, 4),
                                        fmt::format("{:.1f}%", 100 * r.top1_agreement)}) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(cell.c_str());
        }
    }
    ImGui::EndTable();
    ImGui::SetWindowFontScale(1);
}

}  // namespace sixstep::ui
