// Reports: what the interpreter and the engine did, as text for a terminal
// (the headless narration) or as JSON for programs. Nothing here computes; it
// only formats.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "app/core/interpreter.h"
#include "pipeline/core/trace.h"

namespace sixstep::app {

// ---- text ----
// In the lesson's language (`lang`, "en" or "zh": the message catalogue).
std::string format_event(const TraceEvent& ev, std::string_view lang = "en");  // one stage, several lines
// A step's narration in two parts: its heading and what it says, printed
// before it runs (a step may take seconds), then what it did and its checks.
// `columns` > 0: what the lesson says is wrapped to that width (a terminal's),
// Chinese by its own rules (line_breaks.h); 0 keeps the author's lines.
std::string format_step_heading(const LessonStep& st, int index, int step_count, std::string_view lang,
                                int columns = 0);
// A lesson's text wrapped as format_step_heading wraps it, each line after `pad`.
std::string wrap_text(std::string_view text, int columns, const std::string& pad);
std::string format_step(const StepReport& r, const LessonState& s);
// `step_note` follows the position: "step 3, a copy of step 1" (a step repeated by a YAML alias).
std::string format_check(const CheckResult& c, std::string_view lang = "en", std::string_view step_note = "");  // "✓ …" or "✗ …"

// ---- JSON ----
nlohmann::ordered_json to_json(const Value& v);
nlohmann::ordered_json to_json(const TraceEvent& ev);
nlohmann::ordered_json to_json(const CheckResult& c);
nlohmann::ordered_json to_json(const StepReport& r);

// Pretty JSON text. A token can hold half of a UTF-8 character, so invalid
// bytes become U+FFFD instead of an exception.
std::string dump_json(const nlohmann::ordered_json& j);
std::string dump_json(const nlohmann::json& j);

}  // namespace sixstep::app
