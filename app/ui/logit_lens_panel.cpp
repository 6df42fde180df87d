// Logit lens: stop the model after each layer, apply the final norm and the
// output head to what the residual stream holds there, and ask which token
// it would predict. One row per layer, the first at the top: the answer
// forming layer by layer. The last row is the model's own output stage.
#include <algorithm>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

void draw_logit_lens_panel(const app::Snapshot& s, ViewState& v, app::Session&, const Rect& r) {
    if (begin_panel("##logit_lens", r)) {
        const auto& lens = s.state.panels.lens;
        panel_title(tr("Logit lens"));
        ImGui::SameLine(0, v.font_px);
        ImGui::TextDisabled("%s", tr("if the model stopped after layer l, it would say\u2026"));
        if (lens.empty()) {
            ImGui::TextDisabled("%s", tr("The lens reads the residual stream of the next forward pass."));
            end_panel();
            return;
        }
        // A little smaller than the body, so a small model's layers fit in
        // half the area; the layer and token columns as wide as their text.
        ImGui::SetWindowFontScale(0.8f);
        const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
        if (ImGui::BeginTable("##lens", 4, flags)) {
            ImGui::TableSetupColumn(tr("layer"), ImGuiTableColumnFlags_WidthFixed);
            ImGui::TableSetupColumn(tr("token"), ImGuiTableColumnFlags_WidthFixed);
            ImGui::TableSetupColumn("p", ImGuiTableColumnFlags_WidthStretch, 1.6f);
            ImGui::TableSetupColumn(tr("then"), ImGuiTableColumnFlags_WidthStretch, 1.6f);
            ImGui::TableHeadersRow();
            for (size_t i = 0; i < lens.size(); ++i) {
                const app::LensRowView& row = lens[i];
                if (row.top.empty()) continue;
                const bool last = i + 1 == lens.size();
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                if (last) ImGui::Text("%d = %s", row.layer, tr("output"));
                else ImGui::Text("%d", row.layer);
                ImGui::TableNextColumn();
                ImGui::PushFont(fonts().bold);
                ImGui::TextUnformatted(visible_piece(row.top.front().piece).c_str());
                ImGui::PopFont();
                ImGui::TableNextColumn();
                const float w = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("100%").x - 8;
                plot::hbar(std::max(10.0f, w), row.top.front().p, last ? theme::active_rgb : theme::accent_rgb);
                ImGui::SameLine();
                ImGui::Text("%.0f%%", row.top.front().p * 100.0f);
                ImGui::TableNextColumn();
                std::string then;
                for (size_t k = 1; k < row.top.size(); ++k) {
                    char item[96];
                    std::snprintf(item, sizeof item, "%s%s %.0f%%", then.empty() ? "" : "  ",
                                  visible_piece(row.top[k].piece).c_str(), row.top[k].p * 100.0f);
                    then += item;
                }
                ImGui::TextDisabled("%s", then.c_str());
            }
            ImGui::EndTable();
        }
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
