// The narration pane: which step this is, what the instructor says (and,
// where there is room, the serving lab's answer in full), and whether the
// step's checks passed.
#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {

// The narration wrapped at the size it is shown in.
struct Fitted {
    std::vector<std::string> lines;
    ImFont* font = nullptr;
    float scale = 1.0f;  // of the font's size
    bool fits = false;   // false: the smallest size, still too tall
};

// A size up when it fits in `room`, else the body size, else the body size
// scaled down in steps until the text fits (to 0.8 of it, still readable
// from the back of the room: the text never scrolls away at the
// projector's sizes). Lines are a font size apart plus the item spacing.
Fitted fit_narration(const std::string& text, float wrap_w, float room) {
    const Fonts& F = fonts();
    const float gap = ImGui::GetStyle().ItemSpacing.y;
    Fitted f;
    auto fits = [&](float size) {
        const float n = static_cast<float>(f.lines.size());
        return n * size + std::max(0.0f, n - 1) * gap <= room;
    };
    f.font = F.narration;
    f.lines = wrap_lines(F.narration, F.narration->FontSize, text, wrap_w);
    if ((f.fits = fits(F.narration->FontSize))) return f;
    f.font = F.body;
    for (f.scale = 1.0f;; f.scale -= 0.05f) {
        f.lines = wrap_lines(F.body, F.body->FontSize * f.scale, text, wrap_w);
        if ((f.fits = fits(F.body->FontSize * f.scale)) || f.scale <= 0.8f) return f;
    }
}

// The lines under the narration: the step's error, the tally of its checks,
// then each failed check spelled out. A failed check matters more than the
// narration's size, so the failures take the room they need while the
// narration still fits (down to its smallest size); where it would not, each
// failure is cut to one line, then only the first is shown, on the tally's
// line, and last the error is cut to one line. The terminal, the log and
// `sixstep check` keep every failure and error whole.
struct Footer {
    std::vector<std::string> error;     // the step's error, wrapped
    std::string tally;                  // "✗ 1/2 checks passed", maybe with the first failure
    std::vector<std::string> failures;  // one entry per line
    float height(float line) const {
        const size_t n = error.size() + (tally.empty() ? 0 : 1) + failures.size();
        return line * static_cast<float>(n);
    }
};

Footer fit_footer(const app::LessonState& st, const std::string& narration, float width, float room, float wrap_w) {
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    Footer f;
    const std::string error = st.error ? "\u26a0 " + std::string(tr(*st.error)) : "";
    if (st.error) f.error = wrap_lines(font, size, error, width);
    std::vector<std::string> failed;
    for (const auto& c : st.checks)
        if (!c.passed) failed.push_back(tr_value("\u2717 " + c.expectation.path + " " + c.expected_text(frame_language()) + " (got " +
                                      c.got_text(frame_language()) + ")"));
    if (!st.checks.empty()) {
        char tally[96];
        std::snprintf(tally, sizeof tally, "%s %zu/%zu %s", failed.empty() ? "\u2713" : "\u2717",
                      st.checks.size() - failed.size(), st.checks.size(), tr("checks passed"));
        f.tally = tally;
    }
    auto narration_fits = [&] {
        const float left = room - f.height(line) - 4.0f;
        return left > 0 && fit_narration(narration, wrap_w, left).fits;
    };
    for (const auto& t : failed)
        for (auto& l : wrap_lines(font, size, t, width)) f.failures.push_back(std::move(l));
    if (narration_fits()) return f;
    f.failures.clear();
    for (const auto& t : failed) f.failures.push_back(fit_text(font, size, t, width));
    if (narration_fits()) return f;
    if (!failed.empty()) {
        // "✗ 1/2 checks passed · ttft_p50_ratio < 1 (got 1.097)", the first
        // failure without its own mark.
        f.failures.clear();
        const std::string first = failed.front().substr(std::string("\u2717 ").size());
        f.tally = fit_text(font, size, f.tally + " \u00b7 " + first + (failed.size() > 1 ? " \u2026" : ""), width);
        if (narration_fits()) return f;
    }
    // Last, the step's error on one line (whole in the log and the terminal).
    if (f.error.size() > 1) f.error = {fit_text(font, size, error, width)};
    return f;
}

}  // namespace

float narration_least_height(const app::Snapshot& s, float width) {
    const app::LessonState& st = s.state;
    const Fonts& F = fonts();
    if (!F.big || !F.body) return 0;  // no fonts built (a test's bare context)
    const ImGuiStyle& style = ImGui::GetStyle();
    const float inner = width - 2 * style.WindowPadding.x, gap = style.ItemSpacing.y;
    // The title as draw_narration sets it where room is short: in the bold face.
    const float title_lines = static_cast<float>(wrap_lines(F.bold, F.bold->FontSize, st.step_title, inner).size());
    // The text at the smallest size fit_narration goes to.
    const float size = F.body->FontSize * 0.8f;
    const float lines =
        static_cast<float>(wrap_lines(F.body, size, reflow(st.narration), inner - style.ScrollbarSize).size());
    const float footer = (st.checks.empty() && !st.error) ? 0.0f : ImGui::GetTextLineHeightWithSpacing() + 4.0f;
    return 2 * style.WindowPadding.y + ImGui::GetTextLineHeightWithSpacing() +  // "Step 3 of 7"
           title_lines * (F.bold->FontSize + gap) + 2 * gap +                   // the title, Spacing()
           lines * (size + gap) + footer;
}

void draw_narration(const app::Snapshot& s, ViewState& v) {
    const Rect& r = v.layout.narration;
    if (begin_panel("##narration", r)) {
        const app::LessonState& st = s.state;
        const Fonts& F = fonts();

        // A reload that failed: its error, above everything, until fixed.
        if (!s.load_error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::bad_rgb));
            ImGui::PushTextWrapPos(0.0f);
            // The loader's message as the catalogue has it (else in English), and the window's own words.
            const std::string shown = "\u26a0 " + tr_value(s.load_error) + " \u2014 showing the last good version (Ctrl+R to retry)";
            ImGui::TextUnformatted(tr_value(shown).c_str());
            ImGui::PopTextWrapPos();
            ImGui::PopStyleColor();
            ImGui::Separator();
        }

        // "Step 3 of 7" with progress dots, then the step's title.
        char head[64];
        std::snprintf(head, sizeof head, "%s %d %s %d", tr("Step"), st.position, tr("of"), st.step_count);
        ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::muted_rgb));
        ImGui::TextUnformatted(head);
        ImGui::PopStyleColor();
        ImGui::SameLine();
        {
            ImDrawList* dl = ImGui::GetWindowDrawList();
            const ImVec2 p = ImGui::GetCursorScreenPos();
            const float rad = v.font_px * 0.22f, gap = rad * 2.8f;
            const float avail = r.right() - p.x - v.font_px;
            const int n = st.step_count;
            const float step_gap = n > 1 ? std::min(gap, avail / static_cast<float>(n)) : gap;
            for (int i = 0; i < n; ++i) {
                const ImVec2 c(p.x + rad + 4 + i * step_gap, p.y + ImGui::GetTextLineHeight() * 0.5f);
                if (i < st.position) dl->AddCircleFilled(c, rad, theme::col(i + 1 == st.position ? theme::active_border_rgb : theme::good_rgb));
                else dl->AddCircle(c, rad, theme::col(theme::pending_border_rgb), 0, 1.5f);
            }
            ImGui::NewLine();
        }
        // The title in the big face unless it would take more than a quarter
        // of the pane: at 1.6x on 1024x768 three big lines left the narration
        // one.
        const float inner_w = ImGui::GetContentRegionAvail().x;
        const float big_h = static_cast<float>(wrap_lines(F.big, F.big->FontSize, st.step_title, inner_w).size()) * F.big->FontSize;
        // Wrapped by the room's rules, not ImGui's (at spaces only, it left
        // "5 ·" alone on a line before a Chinese title), in even lines.
        ImGui::PushFont(big_h <= r.h * 0.25f ? F.big : F.bold);
        for (const std::string& l : balanced_lines(ImGui::GetFont(), ImGui::GetFontSize(), st.step_title, inner_w))
            ImGui::TextUnformatted(l.c_str());
        ImGui::PopFont();
        ImGui::Spacing();

        // The narration itself, wrapped, in a child above the footer (the
        // step's error and its checks, fit_footer), so a long text never
        // pushes the checks off the screen.
        const std::string text = reflow(st.narration);
        const ImVec2 room = ImGui::GetContentRegionAvail();
        const Footer footer = fit_footer(st, text, room.x, room.y, room.x - ImGui::GetStyle().ScrollbarSize);
        const float footer_h = footer.height(ImGui::GetTextLineHeightWithSpacing());
        ImGui::BeginChild("##say", ImVec2(0, footer_h > 0 ? -footer_h - 4.0f : 0.0f), false);
        {
            // A serving lab's answer, the sentence its experiment ends with,
            // under the narration: the diagram's pill has room for its first
            // words only, and the lab's panel, not the inspector, is on screen.
            // At 0.9 of the body size, where the narration leaves room for it.
            const ImVec2 avail = ImGui::GetContentRegionAvail();
            const float wrap_w = avail.x - ImGui::GetStyle().ScrollbarSize;
            const float gap = ImGui::GetStyle().ItemSpacing.y;
            std::vector<std::string> answer;
            const float answer_size = F.body->FontSize * 0.9f;
            if (st.response && st.response->engine_words && !st.response->text.empty())
                answer = wrap_lines(F.body, answer_size, "→ " + response_text(*st.response), wrap_w);
            const float answer_h = static_cast<float>(answer.size()) * (answer_size + gap) + answer_size * 0.5f;

            // The narration comes first: the answer shows only where the
            // narration keeps the size it has without it.
            Fitted said = fit_narration(text, wrap_w, avail.y);
            if (!answer.empty()) {
                const Fitted beside = fit_narration(text, wrap_w, avail.y - answer_h);
                if (beside.fits && beside.font == said.font && beside.scale == said.scale)
                    said = beside;
                else
                    answer.clear();
            }
            v.narration_scale = said.font == F.body ? said.scale : 1.0f;
            ImGui::PushFont(said.font);
            ImGui::SetWindowFontScale(said.scale);
            for (const auto& l : said.lines) ImGui::TextUnformatted(l.empty() ? " " : l.c_str());
            ImGui::SetWindowFontScale(1.0f);
            ImGui::PopFont();
            if (!answer.empty()) {
                ImGui::Dummy(ImVec2(0, answer_size * 0.5f - gap));
                ImGui::PushFont(F.body);
                ImGui::SetWindowFontScale(0.9f);
                ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::accent_rgb));
                for (const auto& l : answer) ImGui::TextUnformatted(l.c_str());
                ImGui::PopStyleColor();
                ImGui::SetWindowFontScale(1.0f);
                ImGui::PopFont();
            }
        }
        ImGui::EndChild();

        ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::bad_rgb));
        for (const auto& l : footer.error) ImGui::TextUnformatted(l.c_str());
        ImGui::PopStyleColor();
        if (!footer.tally.empty()) {
            const bool all_passed = std::all_of(st.checks.begin(), st.checks.end(), [](const auto& c) { return c.passed; });
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(all_passed ? theme::good_rgb : theme::bad_rgb));
            ImGui::TextUnformatted(footer.tally.c_str());
            for (const auto& l : footer.failures) ImGui::TextUnformatted(l.c_str());
            ImGui::PopStyleColor();
        }
    }
    end_panel();
}

}  // namespace sixstep::ui
