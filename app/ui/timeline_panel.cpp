// Timeline: the request's engine time, pass by pass. Tokenizing, the prefill
// (the whole prompt in one forward pass) and each decode step (one token per
// pass) as bars, the sampling after each pass stacked on it (a prefill that
// dwarfs the steps runs off their scale, broken); TTFT bracketed
// from where it starts (tokenizing) to the first token, TPOT as a line over
// the decode steps; a counter: N tokens took N forward passes; and the
// prefill and decode times per token, side by side, and the request before's
// TTFT and TPOT beside them. Only the
// engine's own time is drawn — a class pausing between stepped stages does
// not stretch any bar.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/plot.h"
#include "app/ui/theme.h"
#include "pipeline/core/measure.h"

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

        // Slot 0: tokenizing; then one slot per forward pass. The scale is
        // the decode steps' when a prefill dwarfs them (a long prompt: 30×
        // a step), so that they are bars, not a line on the floor; the
        // prefill then runs off the top, broken, its time written on it.
        const auto height = [](const llm::ViewPass& p) { return p.forward_ms + (p.sampled ? p.sample_ms : 0); };
        double top = view->tokenize_ms, small = std::max(view->tokenize_ms, view->tpot_ms);
        for (const auto& p : view->passes) {
            top = std::max(top, height(p));
            if (!p.prefill) small = std::max(small, height(p));
        }
        const bool off_scale = n_pass > 1 && top > 5 * small;
        top = plot::nice_ceiling((off_scale ? small : std::max(top, view->tpot_ms)) * 1.15);
        // Where the clocks start and stop: notes under the chart, at 0.8 of
        // the body size, wrapped; the chart takes what they leave. With a
        // prefill and decode steps, the second note puts them side by side
        // per token.
        std::string per_token;
        const auto prefill = std::find_if(view->passes.begin(), view->passes.end(), [](const auto& p) { return p.prefill; });
        if (prefill != view->passes.end() && prefill->n_tokens > 0 && view->tpot_ms > 0) {
            // The quotient of the time as printed, so that it divides on a calculator.
            const std::string ms = pretty_number(prefill->forward_ms, 3);
            const double shown = std::strtod(ms.c_str(), nullptr);
            const std::string per_prompt_token =
                pretty_number((shown > 0 ? shown : prefill->forward_ms) / prefill->n_tokens, 3);
            // Beside the mean, the median step: one stall of a busy machine
            // (a 3 ms bar among 0.2 ms ones) moves a mean of a dozen steps,
            // and the lessons compare medians.
            std::vector<double> steps;
            for (const auto& p : view->passes)
                if (!p.prefill && p.sampled) steps.push_back(height(p));
            if (steps.size() >= 2) {
                per_token = tr(fmt::format("Per token: prefill {} ms \u00f7 {} = {} ms, decode {} ms (TPOT; median step {} ms).",
                                           ms, prefill->n_tokens, per_prompt_token, pretty_number(view->tpot_ms, 3),
                                           pretty_number(median(steps), 3)));
            } else {
                per_token = tr(fmt::format("Per token: prefill {} ms \u00f7 {} = {} ms, decode {} ms (TPOT).", ms,
                                           prefill->n_tokens, per_prompt_token, pretty_number(view->tpot_ms, 3)));
            }
        }
        // The request before, for comparison: lesson 05's short prompt is
        // said to answer sooner than the long one, whose figures had gone.
        // Its median step too: the lesson compares medians, and its mean
        // beside this request's median read as the opposite of the claim.
        std::string before;
        if (view->before && view->before->tpot_p50_ms > 0)
            before = tr(fmt::format("The request before: {} prompt tokens, TTFT {} ms, TPOT {} ms (median step {} ms).",
                                    view->before->n_prompt, pretty_number(view->before->ttft_ms, 3),
                                    pretty_number(view->before->tpot_ms, 3), pretty_number(view->before->tpot_p50_ms, 3)));
        else if (view->before && view->before->tpot_ms > 0)
            before = tr(fmt::format("The request before: {} prompt tokens, TTFT {} ms, TPOT {} ms.", view->before->n_prompt,
                                    pretty_number(view->before->ttft_ms, 3), pretty_number(view->before->tpot_ms, 3)));
        else if (view->before)
            before = tr(fmt::format("The request before: {} prompt tokens, TTFT {} ms.", view->before->n_prompt,
                                    pretty_number(view->before->ttft_ms, 3)));
        std::vector<const char*> notes = {
            tr("TTFT = tokenize + prefill + first sample: from the start of tokenizing to the first token."),
            tr("TPOT = mean of (forward + sample, a bar's pale top) over the decode steps."),
            tr("Engine time only: pauses between lesson steps are not counted."),
        };
        std::vector<std::uint32_t> note_rgb = {theme::bad_rgb, theme::good_rgb, theme::muted_rgb};
        if (!before.empty()) {
            notes.insert(notes.begin() + 1, before.c_str());
            note_rgb.insert(note_rgb.begin() + 1, theme::muted_rgb);
        }
        if (!per_token.empty()) {
            notes.insert(notes.begin() + 1, per_token.c_str());
            note_rgb.insert(note_rgb.begin() + 1, theme::text_rgb);
        }
        const float avail_w = ImGui::GetContentRegionAvail().x, spacing = ImGui::GetStyle().ItemSpacing.y;
        ImGui::SetWindowFontScale(0.8f);
        std::vector<float> note_h;
        for (const char* note : notes) note_h.push_back(text_wrapped_height(note, avail_w) + spacing);
        ImGui::SetWindowFontScale(1.0f);
        const float text_h = ImGui::GetTextLineHeightWithSpacing();
        // Notes are left out from the last while the chart would be too flat
        // to read (its frame under a line and a half, with the line above it
        // for the unit and the line under it for the labels): the last
        // repeats the title's "engine time", the one before it is about
        // decode, then prefill against decode per token; the first, TTFT,
        // always stays.
        const float room = ImGui::GetContentRegionAvail().y - 2 * spacing;
        const float min_chart = text_h * 3.3f;
        int n_notes = static_cast<int>(notes.size());
        float notes_h = 0;
        for (const float h : note_h) notes_h += h;
        while (n_notes > 1 && room - notes_h < min_chart) notes_h -= note_h[--n_notes];
        const float chart_h = std::max(text_h * 2.0f, room - notes_h);
        const float left = ImGui::CalcTextSize("0000").x;
        const plot::Frame f = plot::begin(ImVec2(ImGui::GetContentRegionAvail().x, chart_h), 0, n_pass + 1, 0, top, left,
                                          text_h * 0.8f);
        ImGui::SetWindowFontScale(0.8f);
        plot::y_axis(f, "ms");
        plot::bar(f, 0.15, 0.85, view->tokenize_ms, theme::pending_border_rgb);
        const float label_h = ImGui::GetFontSize() * 0.8f;  // a chart label's height
        float above_end = f.min.x;  // where the labels in the line over the frame end
        for (int i = 0; i < n_pass; ++i) {
            const llm::ViewPass& p = view->passes[static_cast<std::size_t>(i)];
            const double x0 = i + 1.15, x1 = i + 1.85;
            const std::uint32_t rgb = p.prefill ? theme::prefill_bar_rgb : theme::decode_bar_rgb;
            if (height(p) > top) {
                plot::bar_off_scale(f, x0, x1, rgb);
                // Its time above it, in the line over the frame (right of the
                // axis's unit): TTFT's label takes the frame's top line.
                std::snprintf(line, sizeof line, "%s ms", pretty_number(p.forward_ms, 3).c_str());
                const float unit_right = f.min.x + ImGui::CalcTextSize(tr("ms")).x * 0.8f + 8;
                const float lx = std::max(f.px(x0), unit_right);
                plot::label(ImVec2(lx, plot::above(f)), line, rgb, 0, 0.8f);
                above_end = std::max(above_end, lx + ImGui::CalcTextSize(line).x * 0.8f);
                continue;
            }
            plot::bar(f, x0, x1, p.forward_ms, rgb);
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
            // In the frame, unless TPOT's line would run through the words
            // (a short chart, TPOT near its top): then in the line over the
            // frame, past the prefill's time written there.
            const float tpot_y = view->tpot_ms > 0 ? f.py(view->tpot_ms) : -1e9f;
            const bool crossed = tpot_y > y - 4 && tpot_y < y - 2 + label_h + 3;
            const float xa_above = std::max(xl, above_end + ImGui::GetFontSize() * 0.5f);
            if (crossed && xa_above + w <= f.max.x) {
                plot::label(ImVec2(xa_above, plot::above(f)), line, theme::bad_rgb, 0, 0.8f);
                ttft_min = ImVec2(xa_above, plot::above(f)), ttft_max = ImVec2(xa_above + w, plot::above(f) + label_h);
            } else if (xl + w <= f.max.x) {
                plot::label_on_chip(f, ImVec2(xl, y - 2), line, theme::bad_rgb, 0, 0.8f);
                ttft_min = ImVec2(xl, y - 2), ttft_max = ImVec2(xl + w, y - 2 + label_h);
            } else {
                plot::label(ImVec2(xb, plot::above(f)), line, theme::bad_rgb, 1, 0.8f);
                ttft_min = ImVec2(xb - w, plot::above(f)), ttft_max = ImVec2(xb, plot::above(f) + label_h);
            }
        }
        if (view->tpot_ms > 0) {
            // TPOT's label goes in the line over the frame, at its right end,
            // where it is free: over its own line it sat on the decode bars
            // that rise above the mean. Else above its line at the right
            // edge, or below the line where it would meet TTFT's (a TPOT near
            // the top of a short run's chart).
            std::snprintf(line, sizeof line, "TPOT %s ms", pretty_number(view->tpot_ms, 3).c_str());
            const float py = f.py(view->tpot_ms), w = ImGui::CalcTextSize(line).x * 0.8f;
            const auto meets_ttft = [&](float x0, float y0) {
                return x0 < ttft_max.x + 4 && ttft_min.x < x0 + w + 4 && y0 < ttft_max.y + 2 && ttft_min.y < y0 + label_h + 2;
            };
            const float ax = f.max.x - w, ay = plot::above(f);
            if (ax > above_end + ImGui::GetFontSize() * 0.5f && !meets_ttft(ax, ay)) {
                plot::label(ImVec2(f.max.x, ay), line, theme::good_rgb, 1, 0.8f);
            } else {
                const float x0 = f.max.x - 2 - w, y0 = py - ImGui::GetFontSize() * 0.85f;
                plot::label(ImVec2(f.max.x - 2, meets_ttft(x0, y0) ? py + 3 : y0), line, theme::good_rgb, 1, 0.8f);
            }
        }
        for (size_t i = 0; i < static_cast<size_t>(n_notes); ++i) {
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(note_rgb[i]));
            text_wrapped(notes[i]);
            ImGui::PopStyleColor();
        }
        ImGui::SetWindowFontScale(1.0f);
    }
    end_panel();
}

}  // namespace sixstep::ui
