// Fonts for a projector: DejaVu Sans (fonts-dejavu-core) at a large size, a
// bold face for headings, a bigger one for the numbers that matter and DejaVu
// Sans Mono for arithmetic. Chinese comes from Noto Sans CJK (fonts-noto-cjk,
// face 2 = Simplified Chinese), merged into every face with glyph ranges built
// from the text actually on screen — the full CJK range would cost ~0.8 s and
// a 64–128 MiB texture.
#pragma once
#include <string>
#include <string_view>

#include <imgui.h>

namespace sixstep::ui {

struct Fonts {
    ImFont* body = nullptr;     // tables, labels
    ImFont* narration = nullptr;  // the step's text: a size up, read from the back of the room
    ImFont* bold = nullptr;     // headings, stage names
    ImFont* big = nullptr;      // the numbers the class must read from the back
    ImFont* mono = nullptr;     // arithmetic
    float body_px = 0;          // the size body was built at
    bool cjk = false;           // Noto CJK merged in
    std::string problem;        // a font that could not be loaded (the app falls back and says so)
};

// The fonts of the current ImGui context (valid after build_fonts).
const Fonts& fonts();
// Forgets them, before their context is destroyed: a later context (a
// test's, with ImGui's default font) must not reach into a freed atlas.
// Their `problem` is kept.
void forget_fonts();

// (Re)builds the atlas at `body_px`, covering Latin, Greek, arrows, maths
// and every character of `text` (add the lesson's text here). Call between
// frames, then recreate the renderer's font texture.
void build_fonts(float body_px, std::string_view text);

// True when `text` has a character the current atlas lacks (a reload or a
// new trace brought new Chinese characters): rebuild before the next frame.
bool fonts_missing_glyphs(std::string_view text);

// Default body size for a framebuffer: 23 px at 1280x720, growing with the
// screen so 1080p projectors get the same proportions. The height counts,
// but no more than the height of a 16:9 screen as wide: a 4:3 projector
// (1024x768) or a 16:10 laptop (1280x800) gets the text a 16:9 screen of its
// width would (1024x576: 18.4 px), so each line holds as many words as the
// layout was made for, with the extra height left for more lines. By height
// alone, 1024x768 had 24.5 px: a quarter fewer characters per line than
// 1280x720: 16 of the 17 lessons had a pane that did not fit, 12 of them
// cut on the right.
float default_font_px(int framebuffer_width, int framebuffer_height);

}  // namespace sixstep::ui
