// The classroom app's entry points — the only UI header the rest of sixstep
// includes. It names no ImGui, GLFW or GL type, so main.cpp and app/cli can
// include it whether or not they are built with the GUI.
//
//     if (sixstep::ui::display_available()) {
//         int rc = sixstep::ui::run_app("lessons/01-six-steps.yaml");
//         if (rc != sixstep::ui::no_window) return rc;
//     }
//     ... fall back to headless narration ...
//
//     sixstep::ui::ScreenshotOptions o;
//     o.lesson_path = "lessons/01-six-steps.yaml";
//     o.out_dir = "shots";
//     sixstep::ui::render_screenshots(o);  // DIR/step-01.png, step-02.png, ...
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sixstep::app {
struct Snapshot;
}

namespace sixstep::ui {

// run_app's answer when no window could be opened (no display, glfwInit or
// the GL context failed): the caller falls back to headless narration.
inline constexpr int no_window = -1;

// True when DISPLAY or WAYLAND_DISPLAY is set and GLFW initialises.
bool display_available();

// What the window test and the frame-time measurement drive; a person at the
// keyboard needs none of it.
struct AppOptions {
    int width = 1280;                  // initial window size, pixels
    int height = 720;
    std::string autoplay;              // keys to press, one per `autoplay_every` frames:
                                       // "right space left home r f11 + -" (see presenter_keys.h)
    int autoplay_every = 8;            // frames between two simulated key presses
    int max_frames = 0;                // 0 = until the window is closed; else quit after this many
    bool quit_after_autoplay = false;  // close the window once every key was pressed and settled
    bool frame_stats = false;          // print per-frame CPU time (max, mean, p99) on exit
};

// Opens the classroom window on a lesson (empty path: the lesson picker over
// lessons/). Blocks until the window closes. Returns 0, or no_window.
int run_app(const std::string& lesson_path);
int run_app(const std::string& lesson_path, const AppOptions& options);

// Frame times measured by the last run_app, in milliseconds (for tests):
// wall-clock time from input to swap, and the CPU time the process spent on
// the frame (all its threads: UI, llvmpipe's rasterizers, the engine worker) —
// the second does not count time the process waited for a busy machine.
struct FrameStats {
    int frames = 0;
    double max_ms = 0;
    double mean_ms = 0;
    double p99_ms = 0;
    double cpu_max_ms = 0;
    double cpu_mean_ms = 0;
    int position = 0;    // the lesson step shown when the window closed
    int step_count = 0;  // of that lesson
};
FrameStats last_frame_stats();

// One step's picture as drawn: RGBA, rows top to bottom, opaque.
struct Frame {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> rgba;
};

struct ScreenshotOptions {
    std::string lesson_path;
    std::string out_dir;  // where step-NN.png go; empty: no files, the callbacks only
    int width = 1280;
    int height = 720;
    float font_scale = 1.0f;   // 1 = the default projector size
    bool quiet = false;        // no "wrote DIR/step-01.png" lines
    std::string language;      // non-empty: the window's own words in this language (a test aid)
    // Called after each step is drawn, with its pixels and the snapshot they
    // were drawn from, so a test can hold the pixels against the measured
    // numbers without a PNG (encoding one is most of a screenshot's time).
    std::function<void(const Frame& frame, const app::Snapshot& shown)> on_frame;
    // Called after each step with the text on the screen (one rendered string
    // per line) and the snapshot, so a test can read what the window says.
    // Without out_dir and on_frame nothing is rasterized: the layout and the
    // text (and the overflow lines) need no pixels.
    std::function<void(int step, const std::string& screen_text, const app::Snapshot& shown)> on_text;
    // Receives one line per step whose narration was shrunk below the body
    // size to fit its pane: "step 5: the narration is shown at 85% of the
    // body size". A shorter text reads larger from the back of the room.
    std::vector<std::string>* narration_notes = nullptr;
};

// Renders the app at every step of a lesson to out_dir/step-NN.png (NN from
// 01) and/or to the callbacks, with EGL surfaceless (no X server needed), or a hidden GLFW window
// when EGL is unavailable and a display exists. Returns 0, or 2 for a bad
// lesson or when no GL context could be made (with one message on stderr).
// `written` (optional) receives the paths of the PNG files. `overflows`
// (optional, a test aid) receives one line per pane whose content did not fit
// in it at a step: "step 3: ##next_token: content below the pane by 41 px".
int render_screenshots(const ScreenshotOptions& options, std::vector<std::string>* written = nullptr,
                       std::vector<std::string>* overflows = nullptr);

}  // namespace sixstep::ui
