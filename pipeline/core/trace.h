// Trace events: what each stage took in, what it gave out, the arithmetic in
// words and how long it took. The engine emits them; the UI draws them, the
// headless runner prints them and lessons assert on them. The engine never
// knows who is watching.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pipeline/core/stage.h"

namespace sixstep {

// A traced value: a number, a text, or a short vector (weights, probabilities).
using Value = std::variant<double, std::string, std::vector<double>>;

std::string format_value(const Value& v, int precision = 6);  // "11", "3.25", "[5, 2, 10, -2]"

struct Field {
    std::string key;    // snake_case, unique within the event: "distance_km", "raw_output"
    Value value;
    std::string unit;   // "km", "min", "" when dimensionless
    std::string label;  // for people: "distance"; empty → key
};

struct TraceEvent {
    Stage stage = Stage::request;
    int iteration = 0;        // LLM: 0 = prefill, n = n-th decode step; toy model: 0
    std::string summary;      // one line: what happened in this stage
    std::vector<std::string> arithmetic;  // the computation with the numbers substituted
    std::vector<Field> inputs;            // what went in
    std::vector<Field> outputs;           // what came out
    std::vector<std::string> warnings;    // e.g. "distance 30 km is outside the training range"
    double elapsed_ms = 0;                // engine time of the stage, measured by the Pipeline
    // Time this call spent on another stage's work, left out of elapsed_ms
    // (the LLM opens its model file while tokenizing: that is load's time).
    double other_stage_ms = 0;

    TraceEvent& in(std::string key, Value v, std::string unit = {}, std::string label = {});
    TraceEvent& out(std::string key, Value v, std::string unit = {}, std::string label = {});
    TraceEvent& says(std::string line);  // appends one line of arithmetic

    // Outputs first, then inputs.
    const Field* find(std::string_view key) const;
};

// All events of one request, in order.
class Trace {
public:
    void add(TraceEvent ev) { events_.push_back(std::move(ev)); }
    void clear() { events_.clear(); }
    const std::vector<TraceEvent>& events() const { return events_; }
    bool empty() const { return events_.empty(); }

    const TraceEvent* last(Stage s) const;

    // Looks up "stage.key" in the latest event of that stage. Besides the
    // event's fields, every event answers "ms" (elapsed time) and
    // "warnings" (all warnings, joined by "; ").
    std::optional<Value> lookup(std::string_view path) const;

private:
    std::vector<TraceEvent> events_;
};

}  // namespace sixstep
