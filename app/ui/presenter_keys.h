// The presenter's keys, and the names the autoplay script uses for them.
//
//   → Space PageDown  next step        ← PageUp  previous step
//   Home              restart          End       last step
//   F11               fullscreen       Ctrl+= / Ctrl+-  font size (Ctrl+0 resets)
//   Ctrl+R            reload the lesson from disk, keeping the step
//   L                 open/close the log          T  inspector ↔ training
//   Ctrl+O            the lesson picker           Ctrl+Q / Esc (in picker)  quit
//   Esc               stop the long work running now (a sweep, training); the step stays undone
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/core/session.h"
#include "app/ui/platform.h"
#include "app/ui/view.h"

namespace sixstep::ui {

enum class WindowAction { none, toggle_fullscreen, quit };

// Applies one key press: session commands for the lesson, view changes for
// the rest. `typing`: a text field has focus, so keys belong to it.
WindowAction handle_key(const KeyPress& key, bool typing, app::Session& session, ViewState& view,
                        const app::Snapshot& snap);

// "right", "space", "left", "home", "end", "f11", "ctrl+=", "ctrl+-",
// "ctrl+0", "ctrl+r", "l", "t", "pagedown", "pageup" → a key press.
std::optional<KeyPress> parse_key(const std::string& name);
// A whitespace-separated script of key names; throws std::invalid_argument
// naming an unknown key.
std::vector<KeyPress> parse_keys(const std::string& script);

}  // namespace sixstep::ui
