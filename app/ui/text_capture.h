// A test aid: the text a frame put on the screen, as words. While a capture
// is on, ImGui's own log records every string a panel's widgets render
// (begin_panel/end_panel open and close it: ImGui ends logging with each
// window), and add_text() — the one way the panels draw text straight into a
// draw list: chart labels, the diagram's boxes, the token chips — records
// its string too. The Chinese screens test reads it to find English the
// catalogue did not translate. With no capture (the window, `sixstep
// screenshot`) add_text() is AddText and the panel hooks test one flag.
#pragma once
#include <string>
#include <vector>

#include <imgui.h>

namespace sixstep::ui {

// Around one frame's drawing. end_text_capture returns the frame's text,
// roughly one rendered line per line.
void begin_text_capture();
std::string end_text_capture();

// Where each add_text() string of the capture went (the last capture's,
// until the next begins): for tests of a chart's labels against each other.
struct PlacedText {
    std::string text;
    ImVec2 min, max;
};
const std::vector<PlacedText>& captured_placements();

// Called by begin_panel after ImGui::Begin and by end_panel before ImGui::End.
void panel_text_begin();
void panel_text_end();

// ImDrawList::AddText, recorded while a capture is on.
void add_text(ImDrawList* dl, const ImFont* font, float size, ImVec2 pos, ImU32 col, const char* text,
              const char* text_end = nullptr);

}  // namespace sixstep::ui
