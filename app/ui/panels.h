// One function per panel, one panel per file. Each draws a fixed-position
// ImGui window into its rectangle from the snapshot, and sends commands to
// the session (never into the engine).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/core/session.h"
#include "app/ui/layout.h"
#include "app/ui/theme.h"
#include "app/ui/view.h"

namespace sixstep::serving {
struct ServingExhibit;
}

namespace sixstep::ui {

void draw_header(const app::Snapshot& s, const app::WorkStatus& w, ViewState& v);  // app_view.cpp
void draw_pipeline_diagram(const app::Snapshot& s, ViewState& v);                 // pipeline_diagram.cpp
void draw_narration(const app::Snapshot& s, ViewState& v);                        // narration.cpp
// The height the narration pane needs, `width` wide, to show the step's
// title and all its text at the smallest size it shrinks to.
float narration_least_height(const app::Snapshot& s, float width);                 // narration.cpp
void draw_inspector(const app::Snapshot& s, ViewState& v);                        // inspector.cpp
void draw_training(const app::Snapshot& s, ViewState& v);                         // training_panel.cpp
// Before the first training step: the examples, inside the current pane.
void draw_training_data(const app::TrainingState& t);                             // training_panel.cpp
void draw_serving(const app::Snapshot& s, ViewState& v);                          // serving_panel.cpp
void draw_knobs(const app::Snapshot& s, ViewState& v, app::Session& session);     // knobs.cpp
void draw_log(const app::Snapshot& s, const app::WorkStatus& w, ViewState& v);     // log_panel.cpp
void draw_lesson_picker(const app::Snapshot& s, ViewState& v, app::Session& session);  // lesson_picker.cpp

// While a command runs: its progress as one line of `width` pixels, words
// then a bar (progress_strip.cpp). work_text: the words, "batch sweep:
// round 1 of 3, batch 8: 5 of 21 — 12 s", "stopping… 3 s".
void draw_work_status(const app::WorkStatus& w, float width, float font_px);
std::string work_text(const app::WorkStatus& w);

// The right-hand area: the model's panel tabs, then the inspector, the
// training view or one or two of the panels below (panel_area.cpp).
void draw_panel_area(const app::Snapshot& s, ViewState& v, app::Session& session);
// The right-hand pane of a lesson without transformer panels: 0 the
// inspector, 1 training, 2 the serving charts (v.right_tab, or by the step
// when it is automatic); T moves to the next one this step has.
int right_pane(const app::Snapshot& s, const ViewState& v);
void next_right_pane(const app::Snapshot& s, ViewState& v);
// The respond stage in the inspector, whatever the right-hand side showed:
// the whole answer the diagram's pill had to cut.
void show_answer(const app::Snapshot& s, ViewState& v);
// The transformer panels, each into its rectangle (one file each).
void draw_tokens_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
void draw_next_token_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
void draw_kv_cache_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
void draw_timeline_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
void draw_attention_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
void draw_logit_lens_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
void draw_kv_experiment_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
void draw_kv_calc_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
// A real server's measured queueing curve beside the prediction (the endpoint kind).
void draw_real_server_panel(const app::Snapshot& s, ViewState& v, app::Session& session, const Rect& r);
// What the window shows on the right: the panels' names, first on top.
std::vector<std::string> shown_panels(const app::Snapshot& s, const ViewState& v);
// The panel-specific error of the last failed panel command, in red, when it concerns `panel`.
void panel_message(const app::Snapshot& s, const char* panel);
// A token piece as a chip shows it: spaces as ␣, line breaks as ↵, byte tokens as stored.
std::string visible_piece(const std::string& piece);

// The panels' backgrounds of the last frame drawn, for the renderer to clear.
struct Backdrop {
    Rect rect;
    std::uint32_t rgb;
};
const std::vector<Backdrop>& backdrops();

// The whole screen for one frame (app_view.cpp).
void draw_app(const app::Snapshot& s, ViewState& v, app::Session& session, float width, float height);

// Rows the knobs panel needs for this step (0 when the lesson allows none).
int knobs_rows(const app::Snapshot& s);

// A slider over [lo, hi] for a knob whose value is `value` (text, as the
// request holds it): whole numbers slide as integers ("8", not "8.00").
// Returns the new value's text once the slider is released, else "" — the
// session checks and applies it (knobs.cpp).
std::string knob_slider(const std::string& value, double lo, double hi, bool whole);

// The serving model's exhibit when the lesson runs serving experiments, else
// null (serving_panel.cpp).
const serving::ServingExhibit* serving_exhibit(const app::Snapshot& s);

// The serving lab's later charts (lessons 12–16), drawn by the serving view
// from its exhibit into the space left (one file per lesson group).
void draw_quantization_chart(const serving::ServingExhibit& e, ImVec2 avail);  // quantization_panel.cpp
void draw_speculative_chart(const serving::ServingExhibit& e, ImVec2 avail);   // speculative_panel.cpp
void draw_cold_start_chart(const serving::ServingExhibit& e, ImVec2 avail);    // cold_start_panel.cpp
void draw_bill_chart(const serving::ServingExhibit& e, ImVec2 avail);          // bill_panel.cpp
void draw_waits_chart(const serving::ServingExhibit& e, ImVec2 avail);         // waits_panel.cpp
void draw_canary_chart(const serving::ServingExhibit& e, ImVec2 avail, bool judged);  // canary_panel.cpp

// Shared helpers (app_view.cpp).
// A fixed window in r. Its background is not drawn by ImGui but cleared by
// the GL before the frame (see backdrops()): on llvmpipe a blended,
// full-screen set of window backgrounds costs more than everything else.
bool begin_panel(const char* id, const Rect& r, bool border = true, std::uint32_t background_rgb = theme::panel_rgb);
void end_panel();
// A heading in the bold face and the accent colour.
void panel_title(const char* text);
// The stage that the diagram highlights and the inspector shows by default:
// the one that ran last, else the next one.
int active_stage(const app::Snapshot& s);

}  // namespace sixstep::ui
