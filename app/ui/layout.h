// Where each panel goes: a pure function of the screen size and the font
// size, so the smoke test can find the diagram's boxes in a screenshot.
//
//   +------------------------------------------------------------+
//   | header: lesson title · step k of n · step title            |
//   +------------------------------------------------------------+
//   | diagram: [1 request]→[2 load]→[3 forward]→…→[6 respond]     |
//   |          the request's values travelling underneath        |
//   +----------------------+-------------------------------------+
//   | narration            | [tabs: the model's panels]          |
//   | knobs                | inspector, training or one or two   |
//   |                      | panels stacked                      |
//   +----------------------+-------------------------------------+
//   | log / key hints                                            |
//   +------------------------------------------------------------+
#pragma once
#include <string>
#include <vector>

namespace sixstep::ui {

struct Rect {
    float x = 0, y = 0, w = 0, h = 0;
    float right() const { return x + w; }
    float bottom() const { return y + h; }
    bool contains(float px, float py) const { return px >= x && px < x + w && py >= y && py < y + h; }
};

struct Layout {
    Rect header, diagram, narration, knobs, inspector, log;
    Rect tabs;  // the strip that picks the right-hand panels (empty when the model has none)
};

// `knobs_lines`: how many rows of controls the knobs panel needs (0: none);
// `log_lines`: the log's height in lines (1: a status line); `tabs`: a strip
// of panel tabs above the right-hand area (its height is taken from it);
// `narration_h`: the least height the narration needs (0: not known), which
// the knobs leave it, down to one row of their own.
Layout compute_layout(float width, float height, float font_px, int knobs_lines, int log_lines, bool tabs = false,
                      float narration_h = 0);
// The narration's and knobs' column: how wide it is in a window `width` wide.
float left_column_width(float width);

// Where the panels `shown` (1 or 2, by name) go in the right-hand area: the
// whole of it, or two stacked, the first a little taller, unless it is the
// next-token panel, which fits its rows to any room.
Rect panel_slot(const Rect& area, const std::vector<std::string>& shown, int i);

// Stage i's box (0..5) inside the diagram's rectangle.
Rect stage_box(const Rect& diagram, int i, float font_px);
// The lane under the boxes where the request's values travel.
Rect packet_lane(const Rect& diagram, float font_px);

}  // namespace sixstep::ui
