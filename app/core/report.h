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
std::string format_step_heading(const LessonStep& st, int index, int step_count, std::string_view lang);
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

}  // namespace sixstep::app
