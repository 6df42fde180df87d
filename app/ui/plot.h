// Charts drawn with ImDrawList, shared by the panels (ImGui 1.86 has no
// ImPlot): a frame that maps data to pixels, bars, lines, a heatmap, axes and
// labels. Panels pass numbers from the snapshot and choose colours; the
// helpers only draw. Rectangles are snapped to whole pixels, so a cell or a
// bar covers exactly the pixels a screenshot test counts.
//
//     plot::Frame f = plot::begin(ImVec2(w, h), 0, n_steps, 0, max_ms);  // reserves the area
//     plot::y_axis(f, "ms");
//     for (int i = 0; i < n_steps; ++i) plot::bar(f, i + 0.1f, i + 0.9f, ms[i], theme::accent_rgb);
//     plot::hline(f, tpot_ms, theme::good_rgb, "TPOT");
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

namespace sixstep::ui::plot {

// A chart's area on screen and the data ranges of its axes; y grows upwards.
struct Frame {
    ImVec2 min, max;          // the plotting area (inside the axes' labels)
    double x0 = 0, x1 = 1;    // data range along x
    double y0 = 0, y1 = 1;    // data range along y
    bool log_x = false;       // x on a log scale (x0, x1 > 0): batch sizes 1, 2, 4 … evenly spaced
    bool clamp_y = false;     // y beyond y0 … y1 drawn just past the edge (2 %): a curve that leaves
                              // the chart on purpose (a hockey stick) stays visible at the top
    std::uint32_t background_rgb = 0;  // the plotting area's fill (a label's backdrop)
    float px(double x) const;  // data → screen pixels
    float py(double y) const;
    ImVec2 at(double x, double y) const { return ImVec2(px(x), py(y)); }
    float width() const { return max.x - min.x; }
    float height() const { return max.y - min.y; }
};

// Reserves `size` at the cursor (ImGui::Dummy), draws a background and
// returns the frame; `left`/`bottom` leave room for axis labels, and the top
// of `size` always keeps a line of small labels (y_axis: the unit, and the
// half of the top tick's label that stands above the frame).
Frame begin(ImVec2 size, double x0, double x1, double y0, double y1, float left = 0, float bottom = 0,
            std::uint32_t background_rgb = 0xF8FAFC);

// Round numbers for axis ticks between lo and hi (0, 5, 10, …), at most max_ticks.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks = 5);
// The ticks of an axis length_px long whose labels are label_px high: round
// numbers (nice_ticks, at most max_ticks gaps) no closer than a label and a
// bit; the two ends when no round step fits; the top alone on an axis
// shorter than two labels.
std::vector<double> axis_ticks(double lo, double hi, float length_px, float label_px, int max_ticks = 4);
// Where a label goes in the line begin() keeps above the frame (its top):
// the y unit at the left, a chart's other notes.
float above(const Frame& f);

// A round upper bound for an axis: 7.3 → 8, 23 → 25.
double nice_ceiling(double x);

// Horizontal gridlines with their values left of the frame, and the unit above.
void y_axis(const Frame& f, std::string_view unit, int max_ticks = 4);

// A vertical bar from y = 0 (or the frame's y0) to y over [xa, xb].
void bar(const Frame& f, double xa, double xb, double y, std::uint32_t rgb);
// A bar too tall for the frame: drawn to its top, with a break across it
// (two slanted gaps) that says the scale does not hold it; the caller labels
// its value.
void bar_off_scale(const Frame& f, double xa, double xb, std::uint32_t rgb);
// A filled rectangle in data coordinates.
void rect(const Frame& f, double xa, double ya, double xb, double yb, std::uint32_t rgb, int alpha = 255);
// A horizontal bar at the cursor: `fraction` (0..1) of `width` filled, a line high.
void hbar(float width, float fraction, std::uint32_t rgb, std::uint32_t track_rgb = 0xE5E7EB);
// A polyline through (xs[i], ys[i]), with a dot at each point when dots.
void line(const Frame& f, const std::vector<double>& xs, const std::vector<double>& ys, std::uint32_t rgb,
          float thickness = 2.5f, bool dots = true);
// The same polyline dashed, no dots: a prediction, a reference.
void dashed_line(const Frame& f, const std::vector<double>& xs, const std::vector<double>& ys, std::uint32_t rgb,
                 float thickness = 1.5f);
// A horizontal or vertical line across the frame, dashed, with a label at its end.
// Its label sits above the line at the right end (label_at 1) or the left (0).
void hline(const Frame& f, double y, std::uint32_t rgb, std::string_view label = {}, float label_at = 1);
// vline's label starts right of the line (or ends left of it: label_left,
// where the curves leave that side's top empty), on line `row` of small
// labels from the top; it returns the label's right edge, so that a second
// vline close by can take the next row instead of writing over it.
float vline(const Frame& f, double x, std::uint32_t rgb, std::string_view label = {}, int row = 0,
            bool label_left = false);

// Text at a screen position; align 0 = left, 0.5 = centred, 1 = right.
void label(ImVec2 at, std::string_view text, std::uint32_t rgb, float align = 0, float scale = 1);
// The same for the model's own words (a token's piece): never translated.
void verbatim_label(ImVec2 at, std::string_view text, std::uint32_t rgb, float align = 0, float scale = 1);
// label() on a chip of the frame's colour: lines drawn before it pass
// under the words, not through them.
void label_on_chip(const Frame& f, ImVec2 at, std::string_view english, std::uint32_t rgb, float align = 0,
                   float scale = 0.8f);

// Colour of a weight in [0, 1]: white through light blue to dark blue.
std::uint32_t heat_rgb(float t);

// A rows × cols grid of square cells at `origin`, `cell` pixels each with a
// one-pixel gap: value(r, c) in [0, 1] is drawn with heat_rgb, a negative
// value as a masked cell (solid masked_rgb). Returns the grid's size.
ImVec2 heatmap(ImVec2 origin, int rows, int cols, float cell, const std::function<float(int, int)>& value,
               std::uint32_t masked_rgb);

// Bars side by side in groups: one group per name along x, one bar per
// series in each, the value written above each bar, the group's name under
// it. y runs from 0 to y_max (0: a round number above the largest value).
// Returns the frame, for lines drawn on top.
struct Series {
    std::string name;
    std::uint32_t rgb = 0;
    std::vector<double> values;  // one per group
};
Frame grouped_bars(ImVec2 size, const std::vector<std::string>& groups, const std::vector<Series>& series,
                   std::string_view unit, double y_max = 0);

// A number on a chart (a bar's value, an axis tick) written alike with the
// chart's others: where the largest has five digits or more, every one of
// four or more in few characters ("6.15k" beside "21.8k", not "6150");
// otherwise four digits as they are ("6150").
std::string chart_number(double v, double largest);

// Legend entries in a row at the cursor: a swatch and a label each; an
// entry that would pass the right edge starts a new line (a narrow pane, a
// 4:3 projector), unless wrap is false. An entry marked in `dashed` names
// a dashed line and gets two dashes for a swatch, not a square.
void legend(const std::vector<std::pair<std::uint32_t, std::string>>& entries, bool wrap = true,
            const std::vector<bool>& dashed = {});
// The lines legend() takes in a pane `width` wide: a chart above it leaves room.
int legend_lines(const std::vector<std::pair<std::uint32_t, std::string>>& entries, float width);

// Two charts side by side, `width` in all, each under its heading (drawn by
// heading(side)) in `head_lines` lines, so their frames stand level;
// chart(side, size) draws each. A legend, which wraps at the pane's edge,
// belongs on the right (side 1). Two short charts read better beside each
// other than stacked into strips.
void side_by_side(float width, float chart_h, int head_lines, const std::function<void(int side)>& heading,
                  const std::function<void(int side, ImVec2 size)>& chart);
// The width of each of side_by_side's charts.
float side_width(float width);
// Whether a pane `width` wide holds two charts side by side (about twelve
// characters of the current font each, room for four groups' labels).
bool side_by_side_fits(float width);

// ---- line charts with markers and a time axis (the serving lab's charts) ----

// Vertical gridlines at `ticks` with their values under the frame (short:
// 191000 → "191k"), and the axis' name centred under those (leave `bottom`
// ≈ 2.4 lines in begin()).
void x_axis(const Frame& f, const std::vector<double>& ticks, std::string_view name = {});
// The same with each tick's own label ("10 ms", "1 s": a log axis).
void x_axis(const Frame& f, const std::vector<double>& ticks, const std::vector<std::string>& labels);
// Gridlines at the values given, with those values left of the frame, and
// the unit above the frame's left corner (room for a long one: "mean wait, in
// service times"; leave a line above the frame for it).
void y_axis(const Frame& f, std::string_view unit, const std::vector<double>& ticks);
// The same with each tick's own label ("1000", "0.1": a log axis).
void y_axis(const Frame& f, std::string_view unit, const std::vector<double>& ticks, const std::vector<std::string>& labels);
// A one-pixel border around the frame.
void outline(const Frame& f, std::uint32_t rgb);
// A straight line from (xa, ya) to (xb, yb), dashed or solid: a fitted line, a guide.
void segment(const Frame& f, double xa, double ya, double xb, double yb, std::uint32_t rgb, float thickness = 1.5f,
             bool dashed = false);
// A solid vertical marker two pixels wide across the frame (snapped, so a
// test finds its column), with a label right of its foot: "knee: batch 8"
// (left of it near the frame's right edge), or left of its top (at_top).
void vmarker(const Frame& f, double x, std::uint32_t rgb, std::string_view label = {}, bool at_top = false);
// A filled dot of `radius` pixels at (x, y).
void dot(const Frame& f, double x, double y, std::uint32_t rgb, float radius = 6);
// A measured point with its interval: a ring at (x, y) and a vertical line
// from y − half_width to y + half_width (a 95 % confidence interval).
void error_bar(const Frame& f, double x, double y, double half_width, std::uint32_t rgb);

// One bar of a Gantt chart whose frame has y0 = 0, y1 = n_rows: row 0 at
// the top, from xa to xb, at least one pixel wide, a one-pixel gap under it
// when rows are taller than four pixels.
void span(const Frame& f, int row, double xa, double xb, std::uint32_t rgb);

// The colour of the i-th of many things (requests, sequences): hues spread
// by the golden angle, mid lightness, so neighbours differ and text stays legible.
std::uint32_t category_rgb(int i);

// One square of cell_grid: its colour, the part of it (from the top) drawn
// in that colour — the rest in rest_rgb, like a block partly written — an
// outline, and a band along its bottom edge (whose the cell is, when its
// colour says something else).
struct Cell {
    std::uint32_t rgb = 0xF3F4F6;
    float solid = 1;                  // 0 … 1
    std::uint32_t rest_rgb = 0xFFFFFF;
    bool outlined = false;            // drawn with outline_rgb, an eighth of the cell thick
    bool banded = false;              // a band in band_rgb, a fifth of the cell high
    std::uint32_t band_rgb = 0;
};
// n square cells, row-major, the largest that fit `size` at `origin`, each
// inset by a pixel. Returns the side of a cell, in pixels.
float cell_grid(ImVec2 origin, ImVec2 size, int n, const std::function<Cell(int)>& cell, std::uint32_t outline_rgb);

}  // namespace sixstep::ui::plot
