#include "app/ui/overflow.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>
#include <imgui_internal.h>

#include "pipeline/core/text.h"

namespace sixstep::ui {

namespace {

std::vector<std::string>* sink = nullptr;

// Rounding and ImGui's half-pixel offsets: less than this is not a cut.
constexpr float slack_px = 1.5f;

void add(const ImGuiWindow* w, const char* what, float px) {
    // A child's name is "parent/child_XXXXXXXX": the pane's id then the child's.
    char line[256];
    std::snprintf(line, sizeof line, "%s: %s %.0f px", w->Name, what, std::ceil(px));
    sink->push_back(line);
}

// Content laid out past the visible rectangle: below (ImGui then shows a
// scrollbar: the content, with the bottom padding, is taller than the pane)
// or past the right edge (cut). CursorMaxPos is where the last item ended,
// before any scrolling (screenshots never scroll).
void check_window(ImGuiWindow* w, int frame) {
    const float below = w->DC.CursorMaxPos.y + w->WindowPadding.y - w->InnerRect.Max.y;
    const float right = w->DC.CursorMaxPos.x - w->InnerClipRect.Max.x;
    if (below > slack_px) add(w, "content below the pane by", below);
    else if (w->ScrollbarY) add(w, "a scrollbar, content reaching to the pane's bottom padding, within", -below);
    if (right > slack_px) add(w, "content past the right edge by", right);
    // Tables in this window: a column's content wider than the column is cut.
    ImGuiContext& g = *ImGui::GetCurrentContext();
    for (int n = 0; n < g.Tables.GetMapSize(); ++n) {
        ImGuiTable* t = g.Tables.TryGetMapData(n);
        if (!t || t->OuterWindow != w || t->LastFrameActive != frame) continue;
        for (int c = 0; c < t->ColumnsCount; ++c) {
            const ImGuiTableColumn& col = t->Columns[c];
            if (!col.IsEnabled) continue;
            const float content = std::max({col.ContentMaxXUnfrozen, col.ContentMaxXFrozen, col.ContentMaxXHeadersIdeal});
            const float cut = content - col.ClipRect.Max.x;
            if (cut > slack_px) {
                char what[96];
                std::snprintf(what, sizeof what, "table column %d cut by", c);
                add(w, what, cut);
            }
        }
    }
    for (ImGuiWindow* child : w->DC.ChildWindows)
        if (child->Active && child->LastFrameActive == frame) check_window(child, frame);
}

}  // namespace

void set_overflow_sink(std::vector<std::string>* s) { sink = s; }

bool overflow_checking() { return sink != nullptr; }

void check_drawn_text(ImVec2 min, ImVec2 max, std::string_view text) {
    if (!sink) return;
    const ImGuiWindow* w = ImGui::GetCurrentWindow();
    if (!w) return;
    const ImRect& r = w->InnerRect;
    const float right = max.x - r.Max.x, left = r.Min.x - min.x, below = max.y - r.Max.y, above = r.Min.y - min.y;
    const float worst = std::max({right, left, below, above});
    if (worst <= slack_px) return;
    const char* side = worst == right ? "right edge" : worst == left ? "left edge" : worst == below ? "bottom" : "top";
    const std::string excerpt = printable_cut(text.substr(0, text.find('\n')), 40);
    char what[160];
    std::snprintf(what, sizeof what, "text \"%s\" drawn past the %s by", excerpt.c_str(), side);
    add(w, what, worst);
}

void check_overflow() {
    if (!sink) return;
    check_window(ImGui::GetCurrentWindow(), ImGui::GetFrameCount());
}

}  // namespace sixstep::ui
