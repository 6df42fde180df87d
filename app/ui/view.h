// What the UI remembers between frames: view state only. Everything the
// class sees comes from the session's Snapshot, redrawn every frame.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/core/session.h"
#include "app/ui/layout.h"

namespace sixstep::ui {

// The presenter's font range (Ctrl+= / Ctrl+-). Past 1.6× the size for the
// screen the panes no longer hold a lesson: at 1.77× lesson 05's narration
// showed its title alone at 1280×720, at 2.14× panes drew over each other.
inline constexpr float max_font_scale = 1.6f;
inline constexpr float min_font_scale = 0.5f;

struct ViewState {
    // Presenter choices.
    float font_scale = 1.0f;          // Ctrl+= / Ctrl+-, on top of the size for the screen
    std::string language;             // non-empty: the window's words in this language, not the lesson's
    int selected_stage = -1;          // clicked box; -1 = follow the stage that ran last
    std::uint64_t selection_version = 0;  // snapshot position when the box was clicked
    bool log_open = false;            // the log panel shows more than one line
    int right_tab = -1;               // -1 = automatic (training while training, serving charts after an
                                      // experiment, else inspector); 0 inspector, 1 training, 2 serving
    int serving_view = -1;            // serving charts of a traffic run: 0 the timeline, 1 the KV block map;
                                      // -1 = automatic (the block map when the run compares KV memory)

    // The travelling request: where it is drawn (in box units, 0..5) and
    // where it goes. Animated towards the target; fixed dt in screenshots.
    float packet_pos = -1.0f;
    float packet_target = -1.0f;
    int last_position = -1;           // lesson position seen last frame

    // Knob text fields being edited (distance "3 km"), by knob name.
    std::map<std::string, std::string> knob_text;
    std::map<std::string, std::string> knob_seed;  // the value each knob_text started from
    int knob_text_position = -1;      // refilled from the request when the step changes

    // The right-hand panels: tabs clicked at this step (empty: what the
    // lesson shows), and what the session was last told the window shows.
    std::vector<std::string> panel_choice;
    int panel_choice_position = -1;
    std::vector<std::string> panels_told;
    bool panels_told_once = false;

    // Panel inputs being edited.
    int force_id = 0;                 // next token: an id typed to force
    int force_id_offered = -1;        // the forced token last put in that field (" rug" at lesson 07 step 9)
    int kv_experiment_tokens = 32;    // with vs without the cache: tokens to generate
    int kv_experiment_seen = 0;       // the length of the run the slider was last set to, and at which step
    int kv_experiment_position = -1;
    int kv_calc_position = -1;        // the step the calculator's fields were filled at
    std::string kv_calc_preset;       // the calculator: the preset chosen
    int kv_calc_dtype = 0;            // index into the snapshot's dtype names
    double kv_calc_tokens = 0, kv_calc_sessions = 1;

    std::string lessons_folder;       // for the picker
    bool picker = false;              // show the lesson picker instead of a lesson

    // Filled by the app each frame.
    Layout layout;
    float font_px = 23;
    float dt = 1.0f / 60.0f;
    // The narration's size as last drawn, relative to the body font: below 1
    // it was shrunk to fit (a long text; `screenshot` tells the author).
    float narration_scale = 1.0f;
};

}  // namespace sixstep::ui
