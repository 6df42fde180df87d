#include "app/ui/layout.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace sixstep::ui {

namespace {
constexpr float margin = 8;  // pixels between panels and around the screen
}

float left_column_width(float width) { return std::round((width - 3 * margin) * 0.40f); }

Layout compute_layout(float width, float height, float f, int knobs_lines, int log_lines, bool tabs, float narration_h) {
    Layout l;
    const float m = margin;
    l.header = {0, 0, width, std::round(f * 2.0f)};
    l.diagram = {m, l.header.bottom() + m, width - 2 * m, std::round(f * 7.2f)};
    const float log_h = std::round(f * (1.0f + 1.15f * std::max(1, log_lines)) );
    l.log = {m, height - m - log_h, width - 2 * m, log_h};
    const float top = l.diagram.bottom() + m, bottom = l.log.y - m;
    const float left_w = left_column_width(width);
    // The knobs take the rows they need, up to half the column: at a large
    // font (Ctrl+ on a projector) their rows ran over the key hints and the
    // narration, what the class reads, shrank to a line. Past half they
    // scroll, as every panel does. And they leave the narration the room it
    // needs at its smallest size, down to one row of their own: at 1024×768
    // and 1.6× half the column still left lesson 10's four lines one.
    const float column_h = bottom - top;
    float knobs_h =
        knobs_lines > 0 ? std::min(std::round(f * (2.0f + 1.75f * knobs_lines)), std::floor((column_h - m) * 0.5f)) : 0;
    if (knobs_lines > 0 && narration_h > 0)
        knobs_h = std::min(knobs_h, std::max(std::round(f * 3.75f), std::floor(column_h - m - narration_h)));
    l.narration = {m, top, left_w, column_h - (knobs_h > 0 ? knobs_h + m : 0)};
    l.knobs = {m, l.narration.bottom() + m, left_w, knobs_h};
    l.inspector = {2 * m + left_w, top, width - 3 * m - left_w, bottom - top};
    if (tabs) {
        l.tabs = {l.inspector.x, top, l.inspector.w, std::round(f * 1.5f)};
        l.inspector.y = l.tabs.bottom() + std::round(m / 2);
        l.inspector.h = bottom - l.inspector.y;
    }
    return l;
}

Rect panel_slot(const Rect& area, const std::vector<std::string>& shown, int i) {
    const size_t n = shown.size();
    if (n <= 1) return area;
    const float m = std::round(margin / 2);
    // The next-token panel shows as many candidate rows as its room holds;
    // the others have a least height (the KV cache's grid, legend and byte
    // formula overflowed 45 % of the area at 1280×720 by up to 30 px). The
    // taller share goes to the one that cannot adapt.
    const bool first_adapts = shown[0] == "next_token" && shown[1] != "next_token";
    const float top_h = std::round((area.h - m) * (first_adapts ? 0.45f : 0.55f));
    if (i == 0) return {area.x, area.y, area.w, top_h};
    return {area.x, area.y + top_h + m, area.w, area.h - top_h - m};
}

Rect stage_box(const Rect& d, int i, float f) {
    const float gap = std::round(f * 1.25f);  // room for the arrow
    const float pad = std::round(f * 0.35f);
    const float w = (d.w - 2 * pad - 5 * gap) / 6.0f;
    return {std::round(d.x + pad + i * (w + gap)), d.y + pad, std::round(w), std::round(f * 4.3f)};
}

Rect packet_lane(const Rect& d, float f) {
    const Rect b = stage_box(d, 0, f);
    return {d.x, b.bottom() + std::round(f * 0.4f), d.w, d.bottom() - b.bottom() - std::round(f * 0.6f)};
}

}  // namespace sixstep::ui
