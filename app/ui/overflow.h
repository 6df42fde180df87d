// A test aid: does every pane's content fit in its pane? While a sink is set,
// end_panel() looks at the ImGui window it closes (and its child windows and
// tables) and appends one line per way the content did not fit:
//
//     ##next_token: content 41 px below the pane
//     ##logit_lens: table column 0 cut by 23 px
//
// What ImGui laid out is checked (items, tables); text drawn straight into a
// draw list (chart labels, the diagram's boxes) is not. With no sink (the
// window, `sixstep screenshot`) end_panel() pays one pointer test.
#pragma once
#include <string>
#include <vector>

namespace sixstep::ui {

void set_overflow_sink(std::vector<std::string>* sink);

// Called by end_panel() before ImGui::End(): checks the current window.
void check_overflow();

}  // namespace sixstep::ui
