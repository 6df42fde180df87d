// The log: every error, failed check and reload, newest last. One line (the
// latest entry and the presenter's keys) unless opened with L or a click.
// While a command has run for a moment, that line shows its progress instead
// (progress_strip.cpp), and the keys say how to stop it.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {
std::uint32_t level_rgb(app::LogEntry::Level l) {
    switch (l) {
        case app::LogEntry::Level::error: return theme::bad_rgb;
        case app::LogEntry::Level::warning: return theme::warn_rgb;
        default: return theme::muted_rgb;
    }
}
}  // namespace

void draw_log(const app::Snapshot& s, const app::WorkStatus& w, ViewState& v) {
    const Rect& r = v.layout.log;
    if (begin_panel("##log", r)) {
        // A step that ends within a blink draws nothing: no flicker on every Next.
        const bool working = w.running && w.elapsed_s >= 0.3;
        const char* keys = tr(working ? "Esc stop" : "\u2192 next  \u2190 back  Home  F11  Ctrl\u00b1 font  Ctrl+R reload  L log");
        char button[32];
        std::snprintf(button, sizeof button, "%s %zu", v.log_open ? "\u25bc" : "\u25b2", s.log.size());
        if (ImGui::SmallButton(button)) v.log_open = !v.log_open;
        ImGui::SameLine();
        const float keys_w = ImGui::CalcTextSize(keys).x;
        if (working) {
            draw_work_status(w, ImGui::GetWindowContentRegionMax().x - ImGui::GetCursorPosX() - keys_w - v.font_px,
                             v.font_px);
            ImGui::SameLine();
        }
        if (!v.log_open) {
            if (!s.log.empty() && !working) {
                const app::LogEntry& e = s.log.back();
                // Its first line, shortened with "…" to the room left of the
                // keys: a failed check's line is longer than the strip, and
                // clipping alone would still lay it out past the pane's edge.
                const std::string_view text = tr(e.text);
                const float room = r.right() - keys_w - 2.5f * v.font_px - ImGui::GetCursorScreenPos().x;
                const std::string line = fit_text(ImGui::GetFont(), ImGui::GetFontSize(),
                                                  text.substr(0, text.find('\n')), std::max(room, 0.0f));
                ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(level_rgb(e.level)));
                ImGui::TextUnformatted(line.c_str());
                ImGui::PopStyleColor();
                ImGui::SameLine();
            }
            ImGui::SetCursorPosX(ImGui::GetWindowContentRegionMax().x - keys_w);
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::muted_rgb));
            ImGui::TextUnformatted(keys);
            ImGui::PopStyleColor();
        } else {
            if (working) ImGui::SetCursorPosX(ImGui::GetWindowContentRegionMax().x - keys_w);
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::muted_rgb));
            ImGui::TextUnformatted(keys);
            ImGui::PopStyleColor();
            ImGui::BeginChild("##lines", ImVec2(0, 0), false);
            for (const auto& e : s.log) {
                ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(level_rgb(e.level)));
                ImGui::Text("%7.1f s  ", e.time_s);
                ImGui::SameLine();
                ImGui::PushTextWrapPos(0.0f);
                ImGui::TextUnformatted(tr(e.text));
                ImGui::PopTextWrapPos();
                ImGui::PopStyleColor();
            }
            if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 1) ImGui::SetScrollHereY(1.0f);
            ImGui::EndChild();
        }
    }
    end_panel();
}

}  // namespace sixstep::ui
