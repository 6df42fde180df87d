// A test aid: does every pane's content fit in its pane? While a sink is set,
// end_panel() looks at the ImGui window it closes (and its child windows and
// tables) and appends one line per way the content did not fit:
//
//     ##next_token: content 41 px below the pane
//     ##logit_lens: table column 0 cut by 23 px
//
// What ImGui laid out is checked (items, tables), and so is text drawn
// straight into a draw list (chart labels, the diagram's boxes: add_text in
// text_capture.h), against the pane it is drawn in:
//
//     ##serving: text "prefix cache on at its fullest: 19 of 256…" drawn past the right edge by 14 px
//
// and two such texts in one pane drawn over or against each other:
//
//     ##serving: text "canary ships" and "rollback" drawn over or against each other
//
// and a chart's horizontal rule (a TPOT line, a limit) run through a text,
// its words struck through:
//
//     ##timeline: text "TTFT 29.6 ms" crossed by a line drawn across the chart
//
// With no sink (the window, `sixstep screenshot` without warnings) the
// checks cost one pointer test.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

namespace sixstep::ui {

void set_overflow_sink(std::vector<std::string>* sink);

// Called by end_panel() before ImGui::End(): checks the current window.
void check_overflow();

// Whether a sink is set (add_text measures its text only then).
bool overflow_checking();
// Text drawn into the current window's draw list over [min, max]: a line
// when it reaches past the window's inner rectangle.
void check_drawn_text(ImVec2 min, ImVec2 max, std::string_view text);
// A horizontal line at `y` from x0 to x1 in the current window: a line when
// it runs through a text drawn there (before or after it, in this frame).
void check_drawn_rule(float y, float x0, float x1);

}  // namespace sixstep::ui
