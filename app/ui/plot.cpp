#include "app/ui/plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "app/ui/format.h"
#include "app/ui/i18n.h"
#include "app/ui/overflow.h"
#include "app/ui/text_capture.h"
#include "app/ui/theme.h"

namespace sixstep::ui::plot {

namespace {

float snap(float v) { return std::round(v); }

ImDrawList* draw_list() { return ImGui::GetWindowDrawList(); }

constexpr std::uint32_t grid_rgb = 0xE5E7EB;

}  // namespace

float Frame::px(double x) const {
    double t = 0;
    if (log_x && x0 > 0 && x1 > x0 && x > 0) t = (std::log2(x) - std::log2(x0)) / (std::log2(x1) - std::log2(x0));
    else if (!log_x && x1 > x0) t = (x - x0) / (x1 - x0);
    return min.x + static_cast<float>(t) * width();
}

float Frame::py(double y) const {
    double t = y1 > y0 ? (y - y0) / (y1 - y0) : 0.0;
    if (clamp_y) t = std::clamp(t, -0.02, 1.02);
    return max.y - static_cast<float>(t) * height();
}

// The line of small labels above a frame (y_axis draws at scale 0.8).
static float top_room() { return ImGui::GetFontSize() * 1.0f; }

float above(const Frame& f) { return f.min.y - top_room(); }

Frame begin(ImVec2 size, double x0, double x1, double y0, double y1, float left, float bottom, std::uint32_t background_rgb) {
    // A plot a line tall shows no bar's height (a large font on a small
    // screen left strips): it keeps a line and a half, and the pane scrolls.
    size.y = std::max(size.y, top_room() + bottom + ImGui::GetFontSize() * 1.5f);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    Frame f;
    f.min = ImVec2(snap(p.x + left), snap(p.y + top_room()));
    f.max = ImVec2(snap(p.x + size.x), snap(p.y + size.y - bottom));
    f.x0 = x0, f.x1 = x1, f.y0 = y0, f.y1 = y1;
    f.background_rgb = background_rgb;
    draw_list()->AddRectFilled(f.min, f.max, theme::col(background_rgb));
    return f;
}

std::vector<double> axis_ticks(double lo, double hi, float length_px, float label_px, int max_ticks) {
    // No more gaps between ticks than the axis holds labels: on an axis
    // shorter than two labels, only the top value (100, 50 and 0 were
    // written over each other in lesson 13's short bar charts).
    const int fit = label_px > 0 ? static_cast<int>(length_px / (label_px * 1.15f)) : max_ticks;
    if (fit < 1) return {hi};
    std::vector<double> ticks = nice_ticks(lo, hi, std::min(max_ticks, fit));
    if (ticks.size() < 2) ticks = {lo, hi};  // a round step past the top: the ends instead
    return ticks;
}

double nice_ceiling(double x) {
    if (!(x > 0)) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(x)));
    for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
        if (x <= m * p * (1 + 1e-9)) return m * p;
    return 10 * p;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
    std::vector<double> out;
    if (!(hi > lo) || max_ticks < 1) return out;
    const double raw = (hi - lo) / max_ticks;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * p;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * p >= raw) {
            step = m * p;
            break;
        }
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
    return out;
}

std::string chart_number(double v, double largest) {
    const double a = std::fabs(v);
    if (a >= 1e4 || (a >= 1000 && largest >= 1e4)) return short_count_text(v);
    if (a >= 1000) return std::to_string(std::lround(v));
    return pretty_number(v, 3);
}

void y_axis(const Frame& f, std::string_view unit, int max_ticks) {
    ImDrawList* dl = draw_list();
    const float scale = 0.8f;
    for (double t : axis_ticks(f.y0, f.y1, f.height(), ImGui::GetFontSize() * scale, max_ticks)) {
        const float y = snap(f.py(t));
        dl->AddLine(ImVec2(f.min.x, y), ImVec2(f.max.x, y), theme::col(grid_rgb), 1.0f);
        const std::string text = chart_number(t, std::max(std::fabs(f.y0), std::fabs(f.y1)));
        label(ImVec2(f.min.x - 4, y - ImGui::GetFontSize() * scale * 0.5f), text, theme::muted_rgb, 1, scale);
    }
    // Above the frame's left edge, right of the tick labels' column: set
    // above the top tick's label, the unit touched it and the line above.
    if (!unit.empty()) label(ImVec2(f.min.x, above(f)), unit, theme::muted_rgb, 0, scale);
}

void rect(const Frame& f, double xa, double ya, double xb, double yb, std::uint32_t rgb, int alpha) {
    const ImVec2 a(snap(f.px(xa)), snap(f.py(yb))), b(snap(f.px(xb)), snap(f.py(ya)));
    if (b.x > a.x && b.y > a.y) draw_list()->AddRectFilled(a, b, theme::col(rgb, alpha));
}

void bar(const Frame& f, double xa, double xb, double y, std::uint32_t rgb) {
    const double base = std::max(0.0, f.y0);
    const float top = snap(f.py(y)), bottom = snap(f.py(base));
    const ImVec2 a(snap(f.px(xa)), std::min(top, bottom - 1)), b(snap(f.px(xb)), bottom);  // at least a pixel high
    if (b.x > a.x) draw_list()->AddRectFilled(a, b, theme::col(rgb));
}

void bar_off_scale(const Frame& f, double xa, double xb, std::uint32_t rgb) {
    bar(f, xa, xb, f.y1, rgb);
    // The break two thirds of the way up, slanted as on a hand-drawn chart.
    const float x0 = snap(f.px(xa)) - 1, x1 = snap(f.px(xb)) + 1, y = f.min.y + f.height() / 3, rise = 4;
    for (const float dy : {-3.0f, 3.0f})
        draw_list()->AddLine(ImVec2(x0, y + dy + rise), ImVec2(x1, y + dy - rise), theme::col(f.background_rgb), 2.5f);
}

void hbar(float width, float fraction, std::uint32_t rgb, std::uint32_t track_rgb) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::Dummy(ImVec2(width, h));
    const float y0 = snap(p.y + h * 0.18f), y1 = snap(p.y + h * 0.82f);
    ImDrawList* dl = draw_list();
    dl->AddRectFilled(ImVec2(snap(p.x), y0), ImVec2(snap(p.x + width), y1), theme::col(track_rgb));
    const float w = snap(width * std::clamp(fraction, 0.0f, 1.0f));
    if (w > 0) dl->AddRectFilled(ImVec2(snap(p.x), y0), ImVec2(snap(p.x) + w, y1), theme::col(rgb));
}

void line(const Frame& f, const std::vector<double>& xs, const std::vector<double>& ys, std::uint32_t rgb, float thickness,
          bool dots) {
    const std::size_t n = std::min(xs.size(), ys.size());
    ImDrawList* dl = draw_list();
    for (std::size_t i = 1; i < n; ++i) dl->AddLine(f.at(xs[i - 1], ys[i - 1]), f.at(xs[i], ys[i]), theme::col(rgb), thickness);
    if (dots)
        for (std::size_t i = 0; i < n; ++i) dl->AddCircleFilled(f.at(xs[i], ys[i]), thickness * 1.3f, theme::col(rgb));
}

void dashed_line(const Frame& f, const std::vector<double>& xs, const std::vector<double>& ys, std::uint32_t rgb,
                 float thickness) {
    // One dash pattern along the whole line (6 pixels drawn, 6 left out): a
    // curve of many short segments, each starting its own dash, was drawn
    // solid where the segments were shorter than a dash (lesson 15's 20 tok/s).
    ImDrawList* dl = draw_list();
    double phase = 0;  // how far into the current 12-pixel period the line is
    for (std::size_t i = 1; i < std::min(xs.size(), ys.size()); ++i) {
        const ImVec2 a = f.at(xs[i - 1], ys[i - 1]), b = f.at(xs[i], ys[i]);
        const double len = std::hypot(b.x - a.x, b.y - a.y);
        if (!(len > 0) || !std::isfinite(len)) continue;
        // Whole pieces of a period at a time; each one moves at least a
        // hundredth of a pixel, so the walk always ends.
        for (double t = 0; t < len;) {
            const double step = std::max(0.01, std::min(phase < 6 ? 6 - phase : 12 - phase, len - t));
            if (phase < 6) {
                const double u0 = t / len, u1 = std::min(1.0, (t + step) / len);
                dl->AddLine(ImVec2(a.x + (b.x - a.x) * static_cast<float>(u0), a.y + (b.y - a.y) * static_cast<float>(u0)),
                            ImVec2(a.x + (b.x - a.x) * static_cast<float>(u1), a.y + (b.y - a.y) * static_cast<float>(u1)),
                            theme::col(rgb), thickness);
            }
            t += step;
            phase = std::fmod(phase + step, 12.0);
        }
    }
}

void hline(const Frame& f, double y, std::uint32_t rgb, std::string_view text, float label_at) {
    const float py = snap(f.py(y));
    ImDrawList* dl = draw_list();
    for (float x = f.min.x; x < f.max.x; x += 10) dl->AddLine(ImVec2(x, py), ImVec2(std::min(x + 6, f.max.x), py), theme::col(rgb), 2.0f);
    check_drawn_rule(py, f.min.x, f.max.x);
    if (text.empty()) return;
    const float x = label_at >= 1 ? f.max.x - 2 : f.min.x + 2;
    // On a chip, as vline's: a bar drawn before it passes under the words
    // (lesson 04's "TPOT 0.967 ms", green on a green bar).
    label_on_chip(f, ImVec2(x, py - ImGui::GetFontSize() * 0.85f), text, rgb, label_at >= 1 ? 1.0f : 0.0f, 0.8f);
}

float vline(const Frame& f, double x, std::uint32_t rgb, std::string_view text, int row, bool label_left) {
    const float px = snap(f.px(x));
    ImDrawList* dl = draw_list();
    for (float y = f.min.y; y < f.max.y; y += 10) dl->AddLine(ImVec2(px, y), ImVec2(px, std::min(y + 6, f.max.y)), theme::col(rgb), 2.0f);
    if (text.empty()) return px;
    const float scale = 0.8f;
    const ImVec2 at(label_left ? px - 3 : px + 3, f.min.y + static_cast<float>(row) * ImGui::GetFontSize() * scale * 1.2f);
    // A curve drawn before it passes under the words ("1 s (Nielsen)" was crossed out).
    label_on_chip(f, at, text, rgb, label_left ? 1.0f : 0.0f, scale);
    return label_left ? px : at.x + ImGui::CalcTextSize(tr(std::string(text))).x * scale;
}

void label_on_chip(const Frame& f, ImVec2 at, std::string_view english, std::uint32_t rgb, float align, float scale) {
    const float w = ImGui::CalcTextSize(tr(std::string(english))).x * scale, x = at.x - w * align;
    draw_list()->AddRectFilled(ImVec2(x - 1, at.y), ImVec2(x + w + 2, at.y + ImGui::GetFontSize() * scale * 1.1f),
                               theme::col(f.background_rgb));
    label(at, english, rgb, align, scale);
}

void label(ImVec2 at, std::string_view english, std::uint32_t rgb, float align, float scale) {
    const std::string en(english);
    verbatim_label(at, tr(en), rgb, align, scale);  // every chart word in the lesson's language
}

void verbatim_label(ImVec2 at, std::string_view text, std::uint32_t rgb, float align, float scale) {
    ImFont* font = ImGui::GetFont();
    const float size = ImGui::GetFontSize() * scale;
    const ImVec2 sz = font->CalcTextSizeA(size, 1e9f, 0, text.data(), text.data() + text.size());
    add_text(draw_list(), font, size, ImVec2(snap(at.x - sz.x * align), snap(at.y)), theme::col(rgb), text.data(),
                         text.data() + text.size());
}

std::uint32_t heat_rgb(float t) {
    t = std::clamp(t, 0.0f, 1.0f);
    // White → sky → deep blue: a weight of 0 disappears, a weight of 1 stands out.
    const float stops[3][3] = {{255, 255, 255}, {125, 181, 236}, {23, 37, 130}};
    const float u = t < 0.5f ? t * 2 : (t - 0.5f) * 2;
    const float* a = stops[t < 0.5f ? 0 : 1];
    const float* b = stops[t < 0.5f ? 1 : 2];
    auto mix = [&](int i) { return static_cast<std::uint32_t>(std::lround(a[i] + (b[i] - a[i]) * u)); };
    return (mix(0) << 16) | (mix(1) << 8) | mix(2);
}

ImVec2 heatmap(ImVec2 origin, int rows, int cols, float cell, const std::function<float(int, int)>& value,
               std::uint32_t masked_rgb) {
    ImDrawList* dl = draw_list();
    const float step = snap(cell);
    const float gap = step >= 6 ? 1 : 0;
    const ImVec2 o(snap(origin.x), snap(origin.y));
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const ImVec2 a(o.x + c * step, o.y + r * step), b(a.x + step - gap, a.y + step - gap);
            const float v = value(r, c);
            dl->AddRectFilled(a, b, theme::col(v < 0 ? masked_rgb : heat_rgb(v)));
        }
    return ImVec2(cols * step, rows * step);
}

// Text set side by side on lines (levels): the first line whose last text
// ends `gap` before x0 takes [x0, x1). Returns that line, -1 when none has room.
template <std::size_t N>
static int first_free_line(std::array<float, N>& line_end, float x0, float x1, float gap) {
    for (std::size_t l = 0; l < N; ++l)
        if (line_end[l] + gap <= x0) {
            line_end[l] = x1;
            return static_cast<int>(l);
        }
    return -1;
}

Frame grouped_bars(ImVec2 size, const std::vector<std::string>& groups, const std::vector<Series>& series,
                   std::string_view unit, double y_max) {
    const float font = ImGui::GetFontSize();
    const float left = font * 3.2f, frame_w = size.x - left;
    const double n = static_cast<double>(std::max<std::size_t>(1, series.size()));
    const double n_groups = static_cast<double>(std::max<std::size_t>(1, groups.size()));
    auto bar_span = [&](std::size_t g, std::size_t k) {  // [xa, xb] in groups
        const double xa = static_cast<double>(g) + 0.12 + 0.76 * static_cast<double>(k) / n;
        return std::pair{xa, xa + 0.76 / n - 0.02};
    };
    // The values written above the bars, left to right, each over its bar's
    // centre but kept inside the frame (the first one met the y axis's
    // labels). Bars narrower than their values (lesson 14's six pairs on a
    // 4:3 screen) write them a level higher in turn: a value that would
    // touch the last one written on a level goes up a level, at most three.
    constexpr float value_scale = 0.75f;
    const float lift = font * 0.85f, gap = font * 0.3f;
    struct Value {
        std::size_t g, k;
        double v;
        std::string text;
        float x0, x1;  // in pixels from the frame's left edge
        int level;     // the highest it may go; -1: no room at all
    };
    // A series of measured values (any not whole) to three significant
    // digits each, so "2.00" stands beside "2.04", not "2"; a series of
    // counts as they are (lesson 13's ceiling k + 1: "9", not "9.00").
    double largest = 0;
    std::vector<bool> measured(series.size(), false);
    for (std::size_t k = 0; k < series.size(); ++k)
        for (double v : series[k].values) {
            largest = std::max(largest, std::fabs(v));
            if (v != std::round(v)) measured[k] = true;
        }
    std::vector<Value> values;
    std::array<float, 3> level_end;
    level_end.fill(-1e9f);
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (std::size_t k = 0; k < series.size(); ++k) {
            if (g >= series[k].values.size()) continue;
            Value val{g, k, series[k].values[g], {}, 0, 0, -1};
            val.text = measured[k] && std::fabs(val.v) < 1000 ? decimal_text(val.v, 3) : chart_number(val.v, largest);
            const auto [xa, xb] = bar_span(g, k);
            const float w = ImGui::CalcTextSize(tr(val.text)).x * value_scale;
            const float centre = static_cast<float>((xa + xb) / 2 / n_groups) * frame_w;
            val.x0 = std::clamp(centre - w / 2, 1.0f, std::max(1.0f, frame_w - w));
            val.x1 = val.x0 + w;
            val.level = first_free_line(level_end, val.x0, val.x1, gap);
            values.push_back(std::move(val));
        }
    // The groups' names under the frame, the same way: a name that would
    // touch the one before goes a line lower, and the frame leaves the room.
    constexpr float name_scale = 0.8f;
    const float name_line = font * 0.95f;
    std::vector<std::pair<float, int>> names;  // left edge from the frame's, line (-1: no room)
    level_end.fill(-1e9f);
    for (const std::string& name : groups) {
        const float w = ImGui::CalcTextSize(tr(name)).x * name_scale;
        const float centre = static_cast<float>((static_cast<double>(names.size()) + 0.5) / n_groups) * frame_w;
        const float x0 = std::clamp(centre - w / 2, 0.0f, std::max(0.0f, frame_w - w));
        names.emplace_back(x0, first_free_line(level_end, x0, x0 + w, gap));
    }
    int name_lines = 1;
    for (const auto& [x0, line] : names) name_lines = std::max(name_lines, line + 1);
    const float bottom = font * 1.3f + name_line * static_cast<float>(name_lines - 1);
    const float unit_end = unit.empty() ? 0 : ImGui::CalcTextSize(tr(std::string(unit))).x * 0.85f + font * 0.3f;
    if (!(y_max > 0)) {
        // Headroom for the values above the bars. One may take the line kept
        // above the frame, so a short chart is not flattened to half its
        // height — except where it would meet the unit written there at the
        // left (the first group's bars, with many groups).
        const float frame_h = size.y - top_room() - bottom;
        const float full_h = font * 0.85f * 1.2f;
        double top = 0;
        for (const Value& val : values) {
            const float own_h = full_h + lift * static_cast<float>(std::max(0, val.level));
            const float value_h = val.x0 < unit_end ? own_h : std::max(0.0f, own_h - top_room());
            const double room = frame_h > 2 * value_h ? frame_h / (frame_h - value_h) : 2.0;
            top = std::max(top, val.v * std::max(1.08, room));
        }
        y_max = nice_ceiling(top);
    }
    const Frame f = begin(size, 0, n_groups, 0, y_max, left, bottom);
    y_axis(f, unit, f.height() < font * 5 ? 2 : 4);  // a short chart: fewer gridlines, labels apart
    for (const Value& val : values) {
        const auto [xa, xb] = bar_span(val.g, val.k);
        bar(f, xa, xb, std::min(val.v, y_max), series[val.k].rgb);
    }
    // Each value as low as it goes without touching one written before: a
    // taller neighbour's value may sit where the level counted from x alone
    // would have put it. Never above the line over the frame. The shortest
    // bars' values first, so that one lifted is a taller bar's: written
    // left to right, a short bar's 11.9k went up over its taller
    // neighbour's 14.5k, the higher number lower.
    std::vector<ImVec4> written;  // x0, y0, x1, y1 on the screen
    const float text_h = font * value_scale;
    std::vector<std::size_t> order(values.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::min(values[a].v, y_max) < std::min(values[b].v, y_max);
    });
    for (const std::size_t i : order) {
        const Value& val = values[i];
        if (val.level < 0) continue;
        const float ceiling = val.x0 < unit_end ? f.min.y : above(f);
        // A value wider than its bar was written on a taller neighbour's body
        // ("1.72万" on Q4_0's): it moves aside, off that bar, while it still
        // stands over its own; where it cannot, it goes over every bar it spans.
        float x0 = f.min.x + val.x0, x1 = f.min.x + val.x1;
        const float w = x1 - x0, own_top = f.py(std::min(val.v, y_max));
        const auto [own_a, own_b] = bar_span(val.g, val.k);
        const float own_pa = f.px(own_a), own_pb = f.px(own_b);
        for (const Value& other : values) {
            const auto [xa, xb] = bar_span(other.g, other.k);
            const float pa = f.px(xa), pb = f.px(xb);
            if (f.py(std::min(other.v, y_max)) >= own_top || !(pa < x1 && x0 < pb)) continue;  // not a taller one met
            const float nx0 = xa > own_a ? pa - 1 - w : pb + 1;  // ends before it, or starts after it
            if (nx0 >= f.min.x + 1 && nx0 + w <= f.max.x - 1 && nx0 < own_pb && nx0 + w > own_pa) x0 = nx0, x1 = nx0 + w;
        }
        float top = own_top;
        for (const Value& other : values) {
            const auto [xa, xb] = bar_span(other.g, other.k);
            if (f.px(xa) < x1 && x0 < f.px(xb)) top = std::min(top, f.py(std::min(other.v, y_max)));
        }
        const float base = top - lift;
        for (int l = 0; l <= std::max(val.level + 1, 2); ++l) {
            const float y0 = base - lift * static_cast<float>(l);
            if (l && y0 < ceiling) break;
            const bool touches = std::any_of(written.begin(), written.end(), [&](const ImVec4& r) {
                return x0 < r.z + gap && r.x < x1 + gap && y0 < r.w && r.y < y0 + text_h;
            });
            if (touches) continue;
            written.push_back(ImVec4(x0, y0, x1, y0 + text_h));
            label(ImVec2(x0, y0), val.text, theme::text_rgb, 0, value_scale);
            break;
        }
    }
    for (std::size_t g = 0; g < groups.size(); ++g)
        if (names[g].second >= 0)
            label(ImVec2(f.min.x + names[g].first, f.max.y + 2 + name_line * static_cast<float>(names[g].second)),
                  groups[g], theme::muted_rgb, 0, name_scale);
    return f;
}

// A legend entry's width: its swatch and its label.
static float legend_entry_width(const std::string& label) {
    return ImGui::GetTextLineHeight() * 0.75f + ImGui::CalcTextSize(tr(label)).x;
}

// Where a legend `width` wide breaks: starts[i] when entry i begins a new
// line. One rule for drawing the legend and for the room a chart leaves it.
static std::vector<bool> legend_breaks(const std::vector<std::pair<std::uint32_t, std::string>>& entries, float width) {
    const float gap = ImGui::GetTextLineHeight() * 0.8f;
    std::vector<bool> starts(entries.size(), false);
    float x = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const float w = legend_entry_width(entries[i].second);
        starts[i] = i && x + gap + w > width;
        x = starts[i] || !i ? w : x + gap + w;
    }
    return starts;
}

int legend_lines(const std::vector<std::pair<std::uint32_t, std::string>>& entries, float width) {
    const std::vector<bool> starts = legend_breaks(entries, width);
    return 1 + static_cast<int>(std::count(starts.begin(), starts.end(), true));
}

void legend(const std::vector<std::pair<std::uint32_t, std::string>>& entries, bool wrap, const std::vector<bool>& dashed) {
    const float h = ImGui::GetTextLineHeight();
    const std::vector<bool> starts = legend_breaks(entries, ImGui::GetContentRegionAvail().x);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) {
            ImGui::SameLine(0, h * 0.8f);
            if (wrap && starts[i]) ImGui::NewLine();
        }
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const ImVec2 a(snap(p.x), snap(p.y + h * 0.2f)), b(snap(p.x + h * 0.6f), snap(p.y + h * 0.8f));
        const std::uint32_t c = entries[i].first;
        if (i < dashed.size() && dashed[i]) {  // a dashed line's entry: two dashes, as the chart draws it
            const float y = snap(p.y + h * 0.5f), t = std::max(2.0f, h * 0.12f), d = (b.x - a.x) * 0.4f;
            draw_list()->AddLine(ImVec2(a.x, y), ImVec2(a.x + d, y), theme::col(c), t);
            draw_list()->AddLine(ImVec2(b.x - d, y), ImVec2(b.x, y), theme::col(c), t);
        } else {
            draw_list()->AddRectFilled(a, b, theme::col(c));
            // A swatch as pale as the page (attention's weight 0 is white) gets an edge.
            if (((c >> 16) & 0xFF) > 0xE8 && ((c >> 8) & 0xFF) > 0xE8 && (c & 0xFF) > 0xE8)
                draw_list()->AddRect(a, b, theme::col(theme::pending_border_rgb));
        }
        ImGui::Dummy(ImVec2(h * 0.75f, h));
        ImGui::SameLine(0, 0);
        ImGui::TextUnformatted(tr(entries[i].second));
    }
}

static float side_gap() { return ImGui::GetStyle().ItemSpacing.x * 2; }

float side_width(float width) { return std::floor((width - side_gap()) / 2); }

bool side_by_side_fits(float width) { return side_width(width) >= ImGui::GetFontSize() * 12; }

void side_by_side(float width, float chart_h, int head_lines, const std::function<void(int side)>& heading,
                  const std::function<void(int side, ImVec2 size)>& chart) {
    const float w = side_width(width), head_h = ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(head_lines);
    const ImVec2 top = ImGui::GetCursorScreenPos();
    for (int side = 0; side < 2; ++side) {
        const float x = top.x + static_cast<float>(side) * (w + side_gap());
        if (side) ImGui::SameLine(0, side_gap());
        ImGui::BeginGroup();
        heading(side);
        ImGui::SetCursorScreenPos(ImVec2(x, top.y + head_h));
        chart(side, ImVec2(w, chart_h));
        ImGui::EndGroup();
    }
}

// Gridlines at the ticks and their labels under the frame, each centred on
// its tick, or (keep_inside) the end ones kept within the frame's width.
static void vertical_ticks(const Frame& f, const std::vector<double>& ticks, const std::vector<std::string>& labels,
                           bool keep_inside) {
    ImDrawList* dl = draw_list();
    // A label that would touch the one before it is left out, its grid line
    // kept: at a large font a log axis's decades ran together ("0.1 ms1 ms").
    const float scale = 0.85f, gap = ImGui::GetFontSize() * 0.4f;
    float last_right = -1e30f;
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        const float x = snap(f.px(ticks[i]));
        dl->AddLine(ImVec2(x, f.min.y), ImVec2(x, f.max.y), theme::col(grid_rgb), 1.0f);
        if (i >= labels.size()) continue;
        const float align = !keep_inside ? 0.5f : x <= f.min.x + 1 ? 0.0f : x >= f.max.x - 1 ? 1.0f : 0.5f;
        const float w = ImGui::CalcTextSize(tr(labels[i])).x * scale;
        if (x - w * align < last_right + gap) continue;
        label(ImVec2(x, f.max.y + 2), labels[i], theme::muted_rgb, align, scale);
        last_right = x - w * align + w;
    }
}

void x_axis(const Frame& f, const std::vector<double>& ticks, const std::vector<std::string>& labels) {
    vertical_ticks(f, ticks, labels, true);
}

void x_axis(const Frame& f, const std::vector<double>& ticks, std::string_view name) {
    std::vector<std::string> labels;
    for (double t : ticks) labels.push_back(short_count_text(t));
    vertical_ticks(f, ticks, labels, false);
    const float line = ImGui::GetFontSize() * 0.85f;
    if (!name.empty()) label(ImVec2((f.min.x + f.max.x) / 2, f.max.y + line + 2), name, theme::muted_rgb, 0.5f, 0.85f);
}

void y_axis(const Frame& f, std::string_view unit, const std::vector<double>& ticks) {
    std::vector<std::string> labels;
    for (double t : ticks) labels.push_back(short_count_text(t));
    y_axis(f, unit, ticks, labels);
}

void y_axis(const Frame& f, std::string_view unit, const std::vector<double>& ticks, const std::vector<std::string>& labels) {
    ImDrawList* dl = draw_list();
    const float scale = 0.85f;
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        const float y = snap(f.py(ticks[i]));
        dl->AddLine(ImVec2(f.min.x, y), ImVec2(f.max.x, y), theme::col(grid_rgb), 1.0f);
        if (i < labels.size())
            label(ImVec2(f.min.x - 4, y - ImGui::GetFontSize() * scale * 0.5f), labels[i], theme::muted_rgb, 1, scale);
    }
    if (!unit.empty()) label(ImVec2(f.min.x, above(f)), unit, theme::muted_rgb, 0, scale);
}

void outline(const Frame& f, std::uint32_t rgb) { draw_list()->AddRect(f.min, f.max, theme::col(rgb)); }

void segment(const Frame& f, double xa, double ya, double xb, double yb, std::uint32_t rgb, float thickness, bool dashed) {
    if (dashed) return dashed_line(f, {xa, xb}, {ya, yb}, rgb, thickness);  // one dash pattern, one place
    draw_list()->AddLine(f.at(xa, ya), f.at(xb, yb), theme::col(rgb), thickness);
}

void vmarker(const Frame& f, double x, std::uint32_t rgb, std::string_view text, bool at_top) {
    const float px = snap(f.px(x));
    draw_list()->AddRectFilled(ImVec2(px - 1, f.min.y), ImVec2(px + 1, f.max.y), theme::col(rgb));
    // The label sits right of the line's foot: a knee's plateau runs along the
    // top right of its chart, and a label there hid its points.
    // at_top: left of the line's top instead, where a rising curve leaves
    // room (the queue's hockey stick is low on the left, off the top right).
    // Either way to the other side where it would pass the frame's edge.
    const float size = ImGui::GetFontSize() * 0.85f;
    if (text.empty()) return;
    const float w = ImGui::CalcTextSize(tr(std::string(text))).x * 0.85f;
    const bool right = at_top ? px - 4 - w < f.min.x : px + 4 + w <= f.max.x;
    label(ImVec2(right ? px + 4 : px - 4, at_top ? f.min.y + 3 : f.max.y - size - 3), text, rgb, right ? 0.0f : 1.0f, 0.85f);
}

void dot(const Frame& f, double x, double y, std::uint32_t rgb, float radius) {
    draw_list()->AddCircleFilled(f.at(x, y), radius, theme::col(rgb));
}

void error_bar(const Frame& f, double x, double y, double half_width, std::uint32_t rgb) {
    ImDrawList* dl = draw_list();
    const float px = f.px(x);
    dl->AddLine(ImVec2(px, f.py(y - half_width)), ImVec2(px, f.py(y + half_width)), theme::col(rgb), 1.5f);
    dl->AddCircle(ImVec2(px, f.py(y)), 5, theme::col(rgb), 12, 2);
}

void span(const Frame& f, int row, double xa, double xb, std::uint32_t rgb) {
    const double n_rows = f.y1 - f.y0;
    if (!(n_rows > 0)) return;
    const float h = f.height() / static_cast<float>(n_rows);
    const float top = snap(f.min.y + h * static_cast<float>(row));
    const float bottom = snap(f.min.y + h * static_cast<float>(row + 1)) - (h > 4 ? 1 : 0);
    const float a = snap(f.px(xa)), b = std::max(snap(f.px(xb)), a + 1);
    draw_list()->AddRectFilled(ImVec2(a, top), ImVec2(b, std::max(bottom, top + 1)), theme::col(rgb));
}

std::uint32_t category_rgb(int i) {
    const float h = std::fmod(static_cast<float>(i) * 0.618034f, 1.0f);
    float r, g, b;
    ImGui::ColorConvertHSVtoRGB(h, 0.55f, 0.85f, r, g, b);
    return (static_cast<std::uint32_t>(r * 255) << 16) | (static_cast<std::uint32_t>(g * 255) << 8) |
           static_cast<std::uint32_t>(b * 255);
}

float cell_grid(ImVec2 origin, ImVec2 size, int n, const std::function<Cell(int)>& cell, std::uint32_t outline_rgb) {
    if (n <= 0) return 0;
    // The largest square cell that fits every one.
    int cols = 1;
    float side = 0;
    for (int c = 1; c <= n; ++c) {
        const int rows = (n + c - 1) / c;
        const float s = std::floor(std::min(size.x / static_cast<float>(c), size.y / static_cast<float>(rows)));
        if (s > side) side = s, cols = c;
    }
    ImDrawList* dl = draw_list();
    const ImVec2 o(snap(origin.x), snap(origin.y));
    for (int i = 0; i < n; ++i) {
        const Cell c = cell(i);
        const ImVec2 a(o.x + side * static_cast<float>(i % cols) + 1, o.y + side * static_cast<float>(i / cols) + 1);
        const ImVec2 b(a.x + side - 2, a.y + side - 2);
        dl->AddRectFilled(a, b, theme::col(c.rgb));
        if (c.solid < 1) dl->AddRectFilled(ImVec2(a.x, snap(a.y + (b.y - a.y) * std::max(c.solid, 0.0f))), b, theme::col(c.rest_rgb));
        if (c.banded) dl->AddRectFilled(ImVec2(a.x, snap(b.y - std::max(2.0f, (b.y - a.y) / 5))), b, theme::col(c.band_rgb));
        if (c.outlined) dl->AddRect(a, b, theme::col(outline_rgb), 0, 0, std::max(2.0f, side / 8));
    }
    return side;
}

}  // namespace sixstep::ui::plot
