// The lesson picker: every lesson under lessons/ with its title, language
// and number of steps. A lesson that does not load is listed with its error.
#include <cstdio>

#include <imgui.h>

#include "app/ui/fonts.h"
#include "app/ui/i18n.h"
#include "app/ui/panels.h"
#include "app/ui/theme.h"

namespace sixstep::ui {

void draw_lesson_picker(const app::Snapshot& s, ViewState& v, app::Session& session) {
    const Layout& l = v.layout;
    const Rect r{l.diagram.x, l.diagram.y, l.diagram.w, l.log.y - 8 - l.diagram.y};
    if (begin_panel("##picker", r)) {
        if (ImGui::IsWindowAppearing()) ImGui::SetWindowFocus();  // ↑ ↓ Enter work at once
        panel_title("Choose a lesson");
        ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::muted_rgb));
        ImGui::Text("from %s  \u2014  click one, or use \u2191 \u2193 and Enter", v.lessons_folder.c_str());
        ImGui::PopStyleColor();
        if (!s.load_error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::bad_rgb));
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextUnformatted(s.load_error.c_str());
            ImGui::PopTextWrapPos();
            ImGui::PopStyleColor();
        }
        ImGui::Spacing();
        const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
        if (ImGui::BeginTable("##lessons", 4, flags)) {
            ImGui::TableSetupColumn("lesson", ImGuiTableColumnFlags_WidthStretch, 3.0f);
            ImGui::TableSetupColumn("language", ImGuiTableColumnFlags_WidthStretch, 0.7f);
            ImGui::TableSetupColumn("steps", ImGuiTableColumnFlags_WidthStretch, 0.5f);
            ImGui::TableSetupColumn("file", ImGuiTableColumnFlags_WidthStretch, 2.0f);
            ImGui::TableHeadersRow();
            for (const auto& c : s.catalog) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::PushID(c.path.c_str());
                if (!c.error.empty()) {
                    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::bad_rgb));
                    ImGui::TextUnformatted(c.error.c_str());
                    ImGui::PopStyleColor();
                } else {
                    ImGui::PushFont(fonts().bold);
                    const bool first = &c == &s.catalog.front();
                    // Enter opens the row in focus as a click does (ImGui's
                    // navigation activates it with Space only).
                    const bool clicked = ImGui::Selectable(c.title.c_str(), false, ImGuiSelectableFlags_SpanAllColumns);
                    const bool entered = ImGui::IsItemFocused() && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
                                                                    ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter)));
                    if (clicked || entered) {
                        session.open(c.path);
                        v.picker = false;
                        v.last_position = -1;
                    }
                    if (first) ImGui::SetItemDefaultFocus();
                    ImGui::PopFont();
                }
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(c.language.c_str());
                ImGui::TableNextColumn();
                if (c.error.empty()) ImGui::Text("%d", c.steps);
                ImGui::TableNextColumn();
                ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::muted_rgb));
                ImGui::TextUnformatted(c.path.c_str());
                ImGui::PopStyleColor();
                ImGui::PopID();
            }
            ImGui::EndTable();
        }
        // The list is made after the work running now (a sweep): say so
        // rather than "no lessons found" until it ends.
        if (s.catalog.empty())
            ImGui::TextUnformatted(tr(session.work().running ? "the list follows the work running now (Esc stops it)"
                                                            : "no lessons found"));
    }
    end_panel();
}

}  // namespace sixstep::ui
