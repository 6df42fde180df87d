// Tokens: the prompt as the model reads it — one chip per token with its id,
// spaces visible (␣), byte-fallback tokens as the vocabulary stores them
// (<0xE4>), the beginning-of-sequence token greyed — and the generated
// tokens appended as they come, a forced one outlined.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/text_capture.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {

std::uint32_t chip_rgb(const llm::ViewToken& t) {
    if (t.byte || t.special) return theme::token_byte_rgb;
    return t.prompt ? theme::token_prompt_rgb : theme::token_generated_rgb;
}

// The chip's text: a byte or a control token as stored, others as read.
std::string chip_text(const llm::ViewToken& t) { return t.byte || t.special ? t.raw : visible_piece(t.piece); }

}  // namespace

void draw_tokens_panel(const app::Snapshot& s, ViewState& v, app::Session&, const Rect& r) {
    if (begin_panel("##tokens", r)) {
        const auto& view = s.state.panels.view;
        panel_title(tr("Tokens"));
        if (!view || view->tokens.empty()) {
            ImGui::TextDisabled("%s", tr("The prompt is tokenized at stage 1."));
            end_panel();
            return;
        }
        const int n_generated = static_cast<int>(view->tokens.size()) - view->n_prompt;
        char line[160];
        std::snprintf(line, sizeof line, "%d prompt tokens \u00b7 %d generated", view->n_prompt, n_generated);
        ImGui::SameLine(0, v.font_px);
        ImGui::TextDisabled("%s", tr(line));

        // The chips flow left to right and wrap at the panel's edge.
        const Fonts& F = fonts();
        ImDrawList* dl = ImGui::GetWindowDrawList();
        const float text_px = F.body->FontSize, id_px = F.mono->FontSize * 0.7f;
        const float pad = std::round(v.font_px * 0.3f), gap = std::round(v.font_px * 0.25f);
        const float chip_h = std::round(text_px + id_px + pad * 1.5f);
        const ImVec2 origin = ImGui::GetCursorScreenPos();
        const float right = origin.x + ImGui::GetContentRegionAvail().x;
        float x = origin.x, y = origin.y;
        for (const llm::ViewToken& t : view->tokens) {
            const std::string text = chip_text(t);
            char id[16];
            std::snprintf(id, sizeof id, "%d", t.id);
            const float w = std::round(std::max(F.body->CalcTextSizeA(text_px, 1e9f, 0, text.c_str()).x,
                                                F.mono->CalcTextSizeA(id_px, 1e9f, 0, id).x) +
                                       2 * pad);
            if (x + w > right && x > origin.x) x = origin.x, y += chip_h + gap;
            const ImVec2 a(std::round(x), std::round(y)), b(a.x + w, a.y + chip_h);
            dl->AddRectFilled(a, b, theme::col(chip_rgb(t)), 4.0f);
            if (t.forced) dl->AddRect(a, b, theme::col(theme::active_border_rgb), 4.0f, 0, 3.0f);
            add_text(dl, F.body, text_px, ImVec2(a.x + pad, a.y + pad * 0.5f),
                        theme::col(t.special ? theme::muted_rgb : theme::text_rgb), text.c_str());
            add_text(dl, F.mono, id_px, ImVec2(a.x + pad, a.y + pad * 0.5f + text_px), theme::col(theme::muted_rgb), id);
            x += w + gap;
        }
        ImGui::SetCursorScreenPos(ImVec2(origin.x, y + chip_h + gap));
        ImGui::Dummy(ImVec2(1, 1));
        ImGui::SetWindowFontScale(0.8f);
        plot::legend({{theme::token_prompt_rgb, tr("prompt")},
                      {theme::token_generated_rgb, tr("generated")},
                      {theme::token_byte_rgb, tr("byte or control token")},
                      {theme::active_border_rgb, tr("forced (outlined)")}});
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
