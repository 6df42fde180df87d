#include "app/ui/text_capture.h"

#include <cstring>

#include <imgui_internal.h>

namespace sixstep::ui {

namespace {
bool capturing = false;
std::string captured;
}  // namespace

void begin_text_capture() {
    capturing = true;
    captured.clear();
}

std::string end_text_capture() {
    capturing = false;
    return std::move(captured);
}

void panel_text_begin() {
    // Depth 0: logging must not open tree nodes the user did not open.
    if (capturing && !GImGui->LogEnabled) ImGui::LogToBuffer(0);
}

void panel_text_end() {
    if (!capturing || !GImGui->LogEnabled) return;
    captured += GImGui->LogBuffer.c_str();  // LogFinish clears the buffer
    captured += '\n';
    ImGui::LogFinish();
}

void add_text(ImDrawList* dl, const ImFont* font, float size, ImVec2 pos, ImU32 col, const char* text,
              const char* text_end) {
    dl->AddText(font, size, pos, col, text, text_end);
    if (capturing) {
        captured.append(text, text_end ? text_end : text + std::strlen(text));
        captured += '\n';
    }
}

}  // namespace sixstep::ui
