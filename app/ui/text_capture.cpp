#include "app/ui/text_capture.h"

#include <cfloat>
#include <cstring>

#include <imgui_internal.h>

#include "app/ui/overflow.h"

namespace sixstep::ui {

namespace {
bool capturing = false;
std::string captured;
std::vector<PlacedText> placements;
}  // namespace

void begin_text_capture() {
    capturing = true;
    captured.clear();
    placements.clear();
}

const std::vector<PlacedText>& captured_placements() { return placements; }

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
    if (overflow_checking()) {
        const char* end = text_end ? text_end : text + std::strlen(text);
        const ImVec2 sz = font->CalcTextSizeA(size, FLT_MAX, 0, text, end);
        check_drawn_text(pos, ImVec2(pos.x + sz.x, pos.y + sz.y), std::string_view(text, static_cast<size_t>(end - text)));
    }
    if (capturing) {
        const char* end = text_end ? text_end : text + std::strlen(text);
        captured.append(text, end);
        captured += '\n';
        const ImVec2 sz = font->CalcTextSizeA(size, FLT_MAX, 0, text, end);
        placements.push_back({std::string(text, end), pos, ImVec2(pos.x + sz.x, pos.y + sz.y)});
    }
}

}  // namespace sixstep::ui
