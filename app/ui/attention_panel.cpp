// Attention: one layer's and one head's softmax weights, a row per query
// position and a column per key position it may look at — dark where it
// looks hard, white where it ignores. Above the diagonal the causal mask
// (grey): a token never sees the future. The layer and head are chosen here;
// a new layer is captured by computing the request again (through the
// session), a layer or head the model lacks is refused with a message.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

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
        const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
        const std::vector<std::pair<std::uint32_t, std::string>> key = {
            {plot::heat_rgb(0.0f), "0"}, {plot::heat_rgb(0.5f), "0.5"}, {plot::heat_rgb(1.0f), "1"},
            {theme::mask_rgb, tr("masked (the future)")}};
        // The key stands at the map's right, a line per entry, where the
        // pane is wide (a projector's): the map takes the whole height. The
        // columns are the rows' tokens in the same order (the diagonal is a
        // token looking at itself), so only the rows carry their pieces.
        float key_w = 0;
        for (const auto& [rgb, text] : key) key_w = std::max(key_w, ImGui::CalcTextSize(text.c_str()).x);
        key_w += font * 1.6f;
        const int n = map->n_pos;
        float label_w = std::min(avail.x * 0.25f, ImGui::CalcTextSize("\u2423mouse").x + 6);
        const float top = std::round(font * 0.3f);
        auto cell_for = [&](float side, float below) {
            return std::floor(std::min({40.0f, (avail.x - side) / n, (avail.y - top - below) / n}));
        };
        const bool key_right = avail.x - key_w - label_w > (avail.y - top) * 1.2f;
        float cell = key_right ? cell_for(label_w + key_w, 0) : cell_for(label_w, line);
        const bool labels = cell >= font * 0.75f;
        if (!labels) {
            label_w = std::round(ImGui::CalcTextSize("0000").x * 0.7f + 6);
            cell = key_right ? cell_for(label_w + key_w, 0) : cell_for(label_w, line);
        }
        if (cell < 2) {
            ImGui::TextDisabled("%s", tr("too many positions to draw here"));
        } else {
            const ImVec2 p0 = ImGui::GetCursorScreenPos();
            const ImVec2 origin(std::round(p0.x + label_w), std::round(p0.y + top));
            const llm::AttentionMap& m = *map;
            const ImVec2 size = plot::heatmap(origin, n, n, cell, [&](int q, int k) {
                return k > q ? -1.0f : m.weight(head, q, k);
            }, theme::mask_rgb);
            // Token pieces beside the rows when they fit, else every 8th
            // position; as large as a row allows.
            const float label_scale = std::clamp(cell / font * 0.8f, 0.7f, 0.95f);
            const auto& tokens = p.view ? p.view->tokens : std::vector<llm::ViewToken>{};
            for (int i = 0; i < n; ++i) {
                const int pos = m.pos0 + i;
                if (!labels && i % 8 != 0 && i != n - 1) continue;
                const std::string text = labels && pos < static_cast<int>(tokens.size())
                                             ? visible_piece(tokens[static_cast<std::size_t>(pos)].piece)
                                             : std::to_string(pos);
                plot::verbatim_label(ImVec2(origin.x - 4, origin.y + i * cell + (cell - font * label_scale) * 0.5f), text,
                                     theme::text_rgb, 1, label_scale);
            }
            ImGui::Dummy(ImVec2(label_w + size.x, top + size.y));
            if (key_right) {
                for (std::size_t i = 0; i < key.size(); ++i) {
                    ImGui::SetCursorScreenPos(ImVec2(origin.x + size.x + font, origin.y + static_cast<float>(i) * line));
                    plot::legend({key[i]});
                }
            } else {
                plot::legend(key);
            }
        }
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
