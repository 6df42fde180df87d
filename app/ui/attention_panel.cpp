// Attention: one layer's and one head's softmax weights, a row per query
// position and a column per key position it may look at — dark where it
// looks hard, white where it ignores. Above the diagonal the causal mask
// (grey): a token never sees the future. The layer and head are chosen here;
// a new layer is captured by computing the request again (through the
// session), a layer or head the model lacks is refused with a message.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {

// "− 1 +": the engine checks the new value, so the buttons do not clamp it.
void stepper(const char* id, const char* label, int value, const std::function<void(int)>& choose) {
    ImGui::PushID(id);
    ImGui::TextUnformatted(label);
    ImGui::SameLine();
    if (ImGui::SmallButton("\u2212")) choose(value - 1);
    ImGui::SameLine();
    ImGui::Text("%d", value);
    ImGui::SameLine();
    if (ImGui::SmallButton("+")) choose(value + 1);
    ImGui::PopID();
}

}  // namespace

void draw_attention_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r) {
    if (begin_panel("##attention", r)) {
        const app::PanelsState& p = s.state.panels;
        panel_title(tr("Attention"));
        ImGui::SameLine(0, v.font_px);
        const int layer = p.attention_layer, head = p.attention_head;
        stepper("layer", tr("layer"), layer, [&](int l) { session.choose_attention(l, head); });
        ImGui::SameLine(0, v.font_px);
        stepper("head", tr("head"), head, [&](int h) { session.choose_attention(layer, h); });
        if (p.n_layer > 0) {
            ImGui::SameLine(0, v.font_px);
            char shape[96];
            std::snprintf(shape, sizeof shape, "(%d layers \u00d7 %d heads)", p.n_layer, p.n_head);
            ImGui::TextDisabled("%s", tr(shape));
        }
        panel_message(s, "attention");
        const auto& map = p.attention;
        if (!map || map->n_pos == 0 || head >= map->n_head) {
            ImGui::TextDisabled("%s", tr("The weights appear with the next forward pass."));
            end_panel();
            return;
        }
        ImGui::SetWindowFontScale(0.8f);
        ImGui::TextDisabled("%s", tr("rows: the token that looks (query) \u00b7 columns: the tokens it looks at (key)"));
        const ImVec2 avail = ImGui::GetContentRegionAvail();
        const float legend_h = ImGui::GetTextLineHeightWithSpacing();
        // Token pieces beside and above the map when its cells are big enough
        // for them; otherwise position numbers at the side only, and the room
        // the pieces would take goes to the cells.
        auto cell_for = [&](float side, float top) {
            return std::floor(std::min({32.0f, (avail.x - side) / map->n_pos, (avail.y - top - legend_h) / map->n_pos}));
        };
        float label_w = std::min(avail.x * 0.25f, ImGui::CalcTextSize("\u2423mouse").x + 6);
        float top = std::round(label_w * 0.6f);
        float cell = cell_for(label_w, top);
        const bool labels = cell >= ImGui::GetFontSize() * 0.75f;
        if (!labels) {
            label_w = std::round(ImGui::CalcTextSize("0000").x * 0.7f + 6);
            top = std::round(ImGui::GetFontSize() * 0.3f);
            cell = cell_for(label_w, top);
        }
        if (cell < 2) {
            ImGui::TextDisabled("%s", tr("too many positions to draw here"));
        } else {
            const ImVec2 p0 = ImGui::GetCursorScreenPos();
            const ImVec2 origin(std::round(p0.x + label_w), std::round(p0.y + top));
            const int n = map->n_pos;
            const llm::AttentionMap& m = *map;
            const ImVec2 size = plot::heatmap(origin, n, n, cell, [&](int q, int k) {
                return k > q ? -1.0f : m.weight(head, q, k);
            }, theme::mask_rgb);
            // Token pieces beside the rows and above the columns, when they fit.
            const auto& tokens = p.view ? p.view->tokens : std::vector<llm::ViewToken>{};
            for (int i = 0; i < n; ++i) {
                const int pos = m.pos0 + i;
                const std::string piece = pos < static_cast<int>(tokens.size()) ? visible_piece(tokens[static_cast<std::size_t>(pos)].piece)
                                                                              : std::to_string(pos);
                if (labels || i % 8 == 0 || i == n - 1) {
                    const std::string text = labels ? piece : std::to_string(pos);
                    plot::label(ImVec2(origin.x - 4, origin.y + i * cell + (cell - ImGui::GetFontSize() * 0.7f) * 0.5f), text,
                                theme::text_rgb, 1, 0.7f);
                }
                if (labels && i % 2 == 0)
                    plot::label(ImVec2(origin.x + i * cell, origin.y - top + (i / 2 % 2) * ImGui::GetFontSize() * 0.6f), piece,
                                theme::muted_rgb, 0, 0.6f);
            }
            ImGui::Dummy(ImVec2(label_w + size.x, top + size.y));
            plot::legend({{plot::heat_rgb(0.0f), "0"}, {plot::heat_rgb(0.5f), "0.5"}, {plot::heat_rgb(1.0f), "1"},
                          {theme::mask_rgb, tr("masked (the future)")}});
        }
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
