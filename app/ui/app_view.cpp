// The whole screen for one frame: the header bar, then every panel in its
// rectangle (layout.h). Also the small helpers that all panels share.
#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/overflow.h"
#include "app/ui/panels.h"
#include "app/ui/text_capture.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

namespace {
std::vector<Backdrop> frame_backdrops;
}

const std::vector<Backdrop>& backdrops() { return frame_backdrops; }

bool begin_panel(const char* id, const Rect& r, bool border, std::uint32_t background_rgb) {
    frame_backdrops.push_back({r, background_rgb});
    ImGui::SetNextWindowPos(ImVec2(r.x, r.y));
    ImGui::SetNextWindowSize(ImVec2(r.w, r.h));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, border ? 2.0f : 0.0f);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                   ImGuiWindowFlags_NoBringToFrontOnFocus;
    const bool open = ImGui::Begin(id, nullptr, flags);
    ImGui::PopStyleVar();
    panel_text_begin();
    return open;
}

void end_panel() {
    check_overflow();
    panel_text_end();
    ImGui::End();
}

void panel_title(const char* text) {
    ImGui::PushFont(fonts().bold);
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::accent_rgb));
    ImGui::TextUnformatted(tr(text));
    ImGui::PopStyleColor();
    ImGui::PopFont();
}

void draw_header(const app::Snapshot& s, const app::WorkStatus& w, ViewState& v) {
    const Rect& r = v.layout.header;
    const bool open = begin_panel("##header", r, false, theme::header_rgb);
    if (open) {
        const Fonts& F = fonts();
        ImDrawList* dl = ImGui::GetWindowDrawList();
        const float y = r.y + (r.h - F.bold->FontSize) * 0.5f;
        const float pad = v.font_px * 0.6f;
        // Right: step k of n, so the room always knows where we are.
        char step[96] = "";
        if (s.has_lesson)
            std::snprintf(step, sizeof step, "%s %d %s %d", tr("Step"), s.state.position, tr("of"),
                          s.state.step_count);
        const float sw = F.bold->CalcTextSizeA(F.bold->FontSize, 1e9f, 0, step).x;
        add_text(dl, F.bold, F.bold->FontSize, ImVec2(r.right() - pad - sw, y), theme::col(theme::active_rgb), step);
        // Left: the app and the lesson.
        // A lesson opening (a big model loading) is not a missing lesson.
        std::string title = s.has_lesson ? s.state.title
                            : w.running  ? std::string("opening the lesson\u2026")
                                         : std::string("choose a lesson");
        const float ax = r.x + pad;
        add_text(dl, F.bold, F.bold->FontSize, ImVec2(ax, y), theme::col(0x93C5FD), "sixstep");
        const float tx = ax + F.bold->CalcTextSizeA(F.bold->FontSize, 1e9f, 0, "sixstep").x + pad;
        // A long title at a large font is cut short of the step count (and
        // the busy mark), never drawn over it.
        const float title_w = r.right() - pad * 3 - sw - F.bold->FontSize - tx;
        title = fit_text(F.bold, F.bold->FontSize, title, std::max(0.0f, title_w));
        add_text(dl, F.bold, F.bold->FontSize, ImVec2(tx, y), theme::col(theme::header_text_rgb), title.c_str());
        if (s.busy || w.running) {
            const char* busy = "\u25cf";
            add_text(dl, F.bold, F.bold->FontSize, ImVec2(r.right() - pad * 2 - sw - F.bold->FontSize, y),
                        theme::col(theme::active_rgb), busy);
        }
    }
    end_panel();
}

void draw_app(const app::Snapshot& s, ViewState& v, app::Session& session, float width, float height) {
    frame_backdrops.clear();
    set_frame_language(!v.language.empty() ? v.language : s.has_lesson ? s.state.language : "en");
    // A new step: the inspector follows the stage that just ran again.
    if (s.has_lesson && s.state.position != v.last_position) {
        v.selected_stage = -1;
        v.right_tab = -1;
        v.last_position = s.state.position;
    }
    const int knob_rows = (s.has_lesson && !v.picker) ? knobs_rows(s) : 0;
    const int log_lines = v.log_open ? 6 : 1;
    const bool tabs = s.has_lesson && !v.picker && s.state.description && !s.state.description->panels.empty();
    const float narration_h = knob_rows > 0 ? narration_least_height(s, left_column_width(width)) : 0;
    v.layout = compute_layout(width, height, v.font_px, knob_rows, log_lines, tabs, narration_h);

    // Once per frame, like the snapshot: the command running now and how far it got.
    const app::WorkStatus work = session.work();
    draw_header(s, work, v);
    if (v.picker || (!s.has_lesson && !work.running)) {
        draw_lesson_picker(s, v, session);
    } else if (s.has_lesson) {
        draw_pipeline_diagram(s, v);
        draw_narration(s, v);
        if (knob_rows > 0) draw_knobs(s, v, session);
        draw_panel_area(s, v, session);
    }
    draw_log(s, work, v);
}

}  // namespace sixstep::ui
