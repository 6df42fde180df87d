#include "app/ui/theme.h"

namespace sixstep::ui::theme {

void apply(float font_px) {
    ImGuiStyle style;  // start from defaults each time: ScaleAllSizes multiplies
    ImGui::StyleColorsLight(&style);
    const float s = font_px / 13.0f;  // ImGui's sizes are tuned for its 13 px font
    style.WindowPadding = ImVec2(10, 8);
    style.FramePadding = ImVec2(6, 3);
    style.ItemSpacing = ImVec2(8, 5);
    style.ItemInnerSpacing = ImVec2(5, 4);
    style.CellPadding = ImVec2(6, 2);
    style.ScrollbarSize = 12;
    style.GrabMinSize = 10;
    style.ScaleAllSizes(s * 0.75f);
    style.WindowBorderSize = 2.0f;
    style.FrameBorderSize = 1.5f;
    style.ChildBorderSize = 1.0f;
    style.WindowRounding = 0.0f;  // square: the cleared backgrounds are rectangles
    style.FrameRounding = 4.0f;
    style.GrabRounding = 4.0f;
    style.TabRounding = 4.0f;
    style.WindowTitleAlign = ImVec2(0.0f, 0.5f);
    style.AntiAliasedLines = true;
    style.AntiAliasedFill = true;

    ImVec4* c = style.Colors;
    c[ImGuiCol_Text] = vec(text_rgb);
    c[ImGuiCol_TextDisabled] = vec(muted_rgb);
    // Panels are fixed rectangles whose backgrounds the renderer clears
    // (panels.h, begin_panel): ImGui draws none.
    c[ImGuiCol_WindowBg] = vec(panel_rgb, 0.0f);
    c[ImGuiCol_ChildBg] = vec(panel_rgb, 0.0f);
    c[ImGuiCol_PopupBg] = vec(panel_rgb);
    c[ImGuiCol_Border] = vec(border_rgb, 0.55f);
    c[ImGuiCol_FrameBg] = vec(0xEEF2F7);
    c[ImGuiCol_FrameBgHovered] = vec(0xDBEAFE);
    c[ImGuiCol_FrameBgActive] = vec(0xBFDBFE);
    c[ImGuiCol_TitleBg] = vec(0xE5E7EB);
    c[ImGuiCol_TitleBgActive] = vec(0xE5E7EB);
    c[ImGuiCol_TitleBgCollapsed] = vec(0xE5E7EB);
    c[ImGuiCol_CheckMark] = vec(accent_rgb);
    // A slider's value is written over its grab: a light grab keeps the
    // digits readable wherever the grab stands ("40" was hidden under it).
    c[ImGuiCol_SliderGrab] = vec(accent_rgb, 0.45f);
    c[ImGuiCol_SliderGrabActive] = vec(0x1E3A8A, 0.6f);
    c[ImGuiCol_Button] = vec(0xE0E7FF);
    c[ImGuiCol_ButtonHovered] = vec(0xC7D2FE);
    c[ImGuiCol_ButtonActive] = vec(0xA5B4FC);
    c[ImGuiCol_Header] = vec(0xE0E7FF);
    c[ImGuiCol_HeaderHovered] = vec(0xC7D2FE);
    c[ImGuiCol_HeaderActive] = vec(0xA5B4FC);
    c[ImGuiCol_Separator] = vec(border_rgb, 0.35f);
    c[ImGuiCol_Tab] = vec(0xE5E7EB);
    c[ImGuiCol_TabHovered] = vec(0xC7D2FE);
    c[ImGuiCol_TabActive] = vec(0xFFFFFF);
    c[ImGuiCol_TableHeaderBg] = vec(0xE5E7EB);
    c[ImGuiCol_TableRowBg] = vec(panel_rgb, 0.0f);
    c[ImGuiCol_TableRowBgAlt] = vec(0xF3F4F6);
    c[ImGuiCol_TableBorderStrong] = vec(border_rgb, 0.5f);
    c[ImGuiCol_TableBorderLight] = vec(border_rgb, 0.25f);
    c[ImGuiCol_PlotLines] = vec(accent_rgb);
    c[ImGuiCol_PlotHistogram] = vec(accent_rgb);
    c[ImGuiCol_ScrollbarBg] = vec(0xF3F4F6);
    ImGui::GetStyle() = style;
}

}  // namespace sixstep::ui::theme
