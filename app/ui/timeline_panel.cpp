// Timeline: the request's engine time, pass by pass. Tokenizing, the prefill
// (the whole prompt in one forward pass) and each decode step (one token per
// pass) as bars, the sampling after each pass stacked on it; TTFT bracketed
// from where it starts (tokenizing) to the first token, TPOT as a line over
// the decode steps; and a counter: N tokens took N forward passes. Only the
// engine's own time is drawn — a class pausing between stepped stages does
// not stretch any bar.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

void draw_timeline_panel(const app::Snapshot& s, ViewState& v, app::Session&, const Rect& r) {
    if (begin_panel("##timeline", r)) {
        const auto& view = s.state.panels.view;
        panel_title(tr("Timeline (engine time)"));
        if (!view || view->passes.empty()) {
            ImGui::TextDisabled("%s", tr("The first bar appears with the prefill (stage 3)."));
            end_panel();
            return;
        }
        const int n_pass = static_cast<int>(view->passes.size());
        const int n_tokens = static_cast<int>(view->tokens.size()) - view->n_prompt;
        char line[256];
        ImGui::SameLine(0, v.font_px);
        std::snprintf(line, sizeof line, "%d forward pass%s \u2192 %d token%s", n_pass, n_pass == 1 ? "" : "es", n_tokens,
                      n_tokens == 1 ? "" : "s");
        ImGui::TextColored(theme::vec(theme::accent_rgb), "%s", tr(line));

        // Slot 0: tokenizing; then one slot per forward pass.
        double top = view->tokenize_ms;
        for (const auto& p : view->passes) top = std::max(top, p.forward_ms + (p.sampled ? p.sample_ms : 0));
        top = plot::nice_ceiling(std::max(top, view->tpot_ms) * 1.15);
        // Where the clocks start and stop: three notes under the chart, at
        // 0.8 of the body size, wrapped; the chart takes what they leave.
        const char* notes[] = {
            tr("TTFT = tokenize + prefill + first sample: from the start of tokenizing to the first token."),
            tr("TPOT = mean of (forward + sample) over the decode steps."),
            tr("Engine time only: pauses between lesson steps are not counted."),
        };
        const std::uint32_t note_rgb[] = {theme::bad_rgb, theme::good_rgb, theme::muted_rgb};
        const float avail_w = ImGui::GetContentRegionAvail().x, spacing = ImGui::GetStyle().ItemSpacing.y;
        ImGui::SetWindowFontScale(0.8f);
        float note_h[3];
        for (int i = 0; i < 3; ++i) note_h[i] = text_wrapped_height(notes[i], avail_w) + spacing;
        ImGui::SetWindowFontScale(1.0f);
        const float text_h = ImGui::GetTextLineHeightWithSpacing();
        // Notes are left out from the last while the chart would be too flat
        // to read (its frame under a line and a half, with the line above it
        // for the unit and the line under it for the labels): the third
        // repeats the title's "engine time", the second is about decode; the
        // first, TTFT, always stays.
        const float room = ImGui::GetContentRegionAvail().y - 2 * spacing;
        const float min_chart = text_h * 3.3f;
        int n_notes = 3;
        float notes_h = note_h[0] + note_h[1] + note_h[2];
        while (n_notes > 1 && room - notes_h < min_chart) notes_h -= note_h[--n_notes];
        const float chart_h = std::max(text_h * 2.0f, room - notes_h);
        const float left = ImGui::CalcTextSize("0000").x;
        const plot::Frame f = plot::begin(ImVec2(ImGui::GetContentRegionAvail().x, chart_h), 0, n_pass + 1, 0, top, left,
                                          text_h * 0.8f);
        ImGui::SetWindowFontScale(0.8f);
        plot::y_axis(f, "ms");
        plot::bar(f, 0.15, 0.85, view->tokenize_ms, theme::pending_border_rgb);
        for (int i = 0; i < n_pass; ++i) {
            const llm::ViewPass& p = view->passes[static_cast<std::size_t>(i)];
            const double x0 = i + 1.15, x1 = i + 1.85;
            plot::bar(f, x0, x1, p.forward_ms, p.prefill ? theme::prefill_bar_rgb : theme::decode_bar_rgb);
            if (p.sampled) plot::rect(f, x0, p.forward_ms, x1, p.forward_ms + p.sample_ms, theme::sample_bar_rgb);
        }
        // Under the bars: what each one is.
        plot::label(ImVec2(f.px(0.5), f.max.y + 2), tr("tok"), theme::muted_rgb, 0.5f, 0.8f);
        plot::label(ImVec2(f.px(1.5), f.max.y + 2), tr("prefill"), theme::prefill_bar_rgb, 0.5f, 0.8f);
        if (n_pass > 1) {
            if (n_pass == 2) std::snprintf(line, sizeof line, "%s 1", tr("decode"));
            else std::snprintf(line, sizeof line, "%s 1\u2026%d", tr("decode"), n_pass - 1);
            plot::label(ImVec2(f.px((n_pass + 3) * 0.5), f.max.y + 2), line, theme::decode_bar_rgb, 0.5f, 0.8f);
        }
        // TTFT from the start of tokenizing to the first token; TPOT over the
        // decode steps. TPOT's line first: TTFT's label goes on a chip over it.
        if (view->tpot_ms > 0) plot::hline(f, view->tpot_ms, theme::good_rgb, "");
        const float label_h = ImGui::GetFontSize() * 0.8f;  // a chart label's height
        ImVec2 ttft_min(0, 0), ttft_max(0, 0);  // where TTFT's label went, when right of its bracket
        if (view->ttft_ms > 0) {
            const float y = f.min.y + 3, xa = f.px(0.1), xb = f.px(1.9);
            ImDrawList* dl = ImGui::GetWindowDrawList();
            dl->AddLine(ImVec2(xa, y), ImVec2(xb, y), theme::col(theme::bad_rgb), 2.0f);
            dl->AddLine(ImVec2(xa, y), ImVec2(xa, y + 8), theme::col(theme::bad_rgb), 2.0f);
            dl->AddLine(ImVec2(xb, y), ImVec2(xb, y + 8), theme::col(theme::bad_rgb), 2.0f);
            std::snprintf(line, sizeof line, "TTFT %s ms", pretty_number(view->ttft_ms, 3).c_str());
            // Right of the bracket; when the bracket ends near the chart's
            // right edge (a prefill alone), above its end instead.
            // Past the prefill bar's right edge (x = 2), not on its top.
            const float w = ImGui::CalcTextSize(line).x * 0.8f, xl = f.px(2.0) + 4;
            if (xl + w <= f.max.x) {
                plot::label_on_chip(f, ImVec2(xl, y - 2), line, theme::bad_rgb, 0, 0.8f);
                ttft_min = ImVec2(xl, y - 2), ttft_max = ImVec2(xl + w, y - 2 + label_h);
            } else {
                plot::label(ImVec2(xb, plot::above(f)), line, theme::bad_rgb, 1, 0.8f);
            }
        }
        if (view->tpot_ms > 0) {
            // TPOT's label sits above its line at the right edge, or below
            // the line where it would meet TTFT's (a TPOT near the top of a
            // short run's chart).
            std::snprintf(line, sizeof line, "TPOT %s ms", pretty_number(view->tpot_ms, 3).c_str());
            const float py = f.py(view->tpot_ms), w = ImGui::CalcTextSize(line).x * 0.8f;
            const float x0 = f.max.x - 2 - w, y0 = py - ImGui::GetFontSize() * 0.85f;
            const bool meets = x0 < ttft_max.x + 4 && ttft_min.x < f.max.x + 2 && y0 < ttft_max.y + 2 &&
                               ttft_min.y < y0 + label_h + 2;
            plot::label(ImVec2(f.max.x - 2, meets ? py + 3 : y0), line, theme::good_rgb, 1, 0.8f);
        }
        for (int i = 0; i < n_notes; ++i) {
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(note_rgb[i]));
            text_wrapped(notes[i]);
            ImGui::PopStyleColor();
        }
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
