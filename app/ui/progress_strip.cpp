// The status line while the worker runs long work — a batch sweep, a
// training run, a big model's load: what runs, how far, a bar, and the key
// that stops it. Drawn in the log's line from Session::work(), which the
// engine's loops update through the session's progress sink; nothing here
// is kept between frames.
#include <algorithm>

#include <fmt/format.h>
#include <imgui.h>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

// In the window's language: the engine reports its task in English (the
// catalogue's key), as it does everywhere.
std::string work_text(const app::WorkStatus& w) {
    const std::string elapsed = fmt::format("{:.0f} s", w.elapsed_s);
    if (w.stopping) return tr(fmt::format("stopping\u2026 {}", elapsed));
    const app::ProgressReport& p = w.progress;
    if (p.task.empty()) return tr(fmt::format("working\u2026 {}", elapsed));
    const std::string count = p.total == 0 ? std::to_string(p.done)
                                           : tr(fmt::format("{} of {}", std::min(p.done, p.total), p.total));
    return fmt::format("{}: {} \u2014 {}", tr(p.task), count, elapsed);
}

void draw_work_status(const app::WorkStatus& w, float width, float font_px) {
    const std::string text = work_text(w);
    const app::ProgressReport& p = w.progress;
    const bool bar = p.total > 0 && !w.stopping;
    // The words first; the bar takes what is left, but never less than a few characters.
    const float bar_w = bar ? std::max(6.0f * font_px, width * 0.3f) : 0.0f;
    const float text_w = std::max(0.0f, width - bar_w - (bar ? 0.5f * font_px : 0.0f));
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(w.stopping ? theme::warn_rgb : theme::text_rgb));
    ImGui::TextUnformatted(fit_text(ImGui::GetFont(), ImGui::GetFontSize(), text, text_w).c_str());
    ImGui::PopStyleColor();
    if (!bar) return;
    ImGui::SameLine();
    const float fraction = static_cast<float>(std::min(p.done, p.total)) / static_cast<float>(p.total);
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram, theme::vec(theme::active_rgb));
    ImGui::ProgressBar(fraction, ImVec2(bar_w, ImGui::GetTextLineHeight()),
                       fmt::format("{:.0f}%", 100.0f * fraction).c_str());
    ImGui::PopStyleColor();
}

}  // namespace sixstep::ui
