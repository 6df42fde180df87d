#include "app/ui/overflow.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include <imgui.h>
#include <imgui_internal.h>

#include "pipeline/core/text.h"

namespace sixstep::ui {

namespace {

std::vector<std::string>* sink = nullptr;

// Text drawn into draw lists since the last check, for the overlap test.
struct DrawnText {
    const ImGuiWindow* window;
    ImRect rect;
    std::string excerpt;
};
std::vector<DrawnText> drawn;

// Horizontal rules drawn since the last check, for the struck-through test.
struct DrawnRule {
    const ImGuiWindow* window;
    float y, x0, x1;
};
std::vector<DrawnRule> rules;

// Rounding and ImGui's half-pixel offsets: less than this is not a cut.
constexpr float slack_px = 1.5f;

// A window's name as an author reads it: ImGui names a child
// "parent/child_XXXXXXXX", the pane's id, the child's, and a hash of the
// child's id that tells the author nothing: "##narration/##say".
std::string pane_name(const ImGuiWindow* w) {
    std::string name = w->Name;
    for (std::size_t end = name.size(); end != std::string::npos && end > 0;) {
        const std::size_t slash = name.rfind('/', end - 1);
        const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
        if (end - start > 9 && name[end - 9] == '_' &&
            std::all_of(name.begin() + static_cast<std::ptrdiff_t>(end - 8), name.begin() + static_cast<std::ptrdiff_t>(end),
                        [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
            name.erase(end - 9, 9);
        end = slash;
    }
    return name;
}

void add(const ImGuiWindow* w, const char* what, float px) {
    char line[256];
    std::snprintf(line, sizeof line, "%s: %s %.0f px", pane_name(w).c_str(), what, std::ceil(px));
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

// Two labels drawn over each other or touching ("canary ships" and
// "rollback" at neighbouring lines, a short axis's 100, 50 and 0): each pair
// in the same window whose boxes share more than a sliver of height and are
// less than a small gap apart side by side.
void check_overlaps() {
    constexpr float sliver_px = 3.0f, gap_px = 5.0f;  // closer than 2 px side by side: touching
    for (std::size_t i = 0; i < drawn.size(); ++i)
        for (std::size_t j = i + 1; j < drawn.size(); ++j) {
            const DrawnText &a = drawn[i], &b = drawn[j];
            if (a.window != b.window) continue;
            // Texts side by side need a gap of a few pixels to read as two.
            const float w = std::min(a.rect.Max.x, b.rect.Max.x) - std::max(a.rect.Min.x, b.rect.Min.x) + gap_px;
            const float h = std::min(a.rect.Max.y, b.rect.Max.y) - std::max(a.rect.Min.y, b.rect.Min.y);
            if (w <= sliver_px || h <= sliver_px) continue;
            char line[256];
            std::snprintf(line, sizeof line, "%s: text \"%s\" and \"%s\" drawn over or against each other",
                          pane_name(a.window).c_str(), a.excerpt.c_str(), b.excerpt.c_str());
            sink->push_back(line);
        }
    // A rule through a text's middle, not one that grazes its top or bottom
    // (a line's own label sits just above it).
    constexpr float margin_px = 3.0f;
    for (const DrawnRule& r : rules)
        for (const DrawnText& t : drawn) {
            if (r.window != t.window) continue;
            if (r.y <= t.rect.Min.y + margin_px || r.y >= t.rect.Max.y - margin_px) continue;
            if (std::min(r.x1, t.rect.Max.x) - std::max(r.x0, t.rect.Min.x) <= sliver_px) continue;
            char line[256];
            std::snprintf(line, sizeof line, "%s: text \"%s\" crossed by a line drawn across the chart",
                          pane_name(t.window).c_str(), t.excerpt.c_str());
            sink->push_back(line);
        }
    drawn.clear();
    rules.clear();
}

}  // namespace

void set_overflow_sink(std::vector<std::string>* s) { sink = s; }

bool overflow_checking() { return sink != nullptr; }

void check_drawn_text(ImVec2 min, ImVec2 max, std::string_view text) {
    if (!sink) return;
    const ImGuiWindow* w = ImGui::GetCurrentWindow();
    if (!w) return;
    const ImRect& r = w->InnerRect;
    const std::string_view first_line = text.substr(0, text.find('\n'));
    if (max.x - min.x > 0.5f && text.find_first_not_of(" ") != std::string_view::npos)
        drawn.push_back({w, ImRect(min, max), printable_cut(first_line, 24)});
    const float right = max.x - r.Max.x, left = r.Min.x - min.x, below = max.y - r.Max.y, above = r.Min.y - min.y;
    const float worst = std::max({right, left, below, above});
    if (worst <= slack_px) return;
    const char* side = worst == right ? "right edge" : worst == left ? "left edge" : worst == below ? "bottom" : "top";
    char what[160];
    std::snprintf(what, sizeof what, "text \"%s\" drawn past the %s by", printable_cut(first_line, 40).c_str(), side);
    add(w, what, worst);
}

void check_drawn_rule(float y, float x0, float x1) {
    if (!sink) return;
    if (const ImGuiWindow* w = ImGui::GetCurrentWindow()) rules.push_back({w, y, std::min(x0, x1), std::max(x0, x1)});
}

void check_overflow() {
    if (!sink) return;
    check_window(ImGui::GetCurrentWindow(), ImGui::GetFrameCount());
    check_overlaps();
}

}  // namespace sixstep::ui
