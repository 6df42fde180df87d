// Trace events: what each stage took in, what it gave out, the arithmetic in
// words and how long it took. The engine emits them; the UI draws them, the
// headless runner prints them and lessons assert on them. The engine never
// knows who is watching.
#pragma once
#include <cstdlib>
#include <optional>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pipeline/core/stage.h"

namespace sixstep {

// A traced value: a number, a text, or a short vector (weights, probabilities).
using Value = std::variant<double, std::string, std::vector<double>>;

std::string format_value(const Value& v, int precision = 6);  // "11", "3.25", "[5, 2, 10, -2]"
// A list as "[a, b, c]", each number by `number`; a NaN, a value not measured
// there (a real server's pace at a rate where too few requests queued), as
// "—", which a class reads as such, not "nan", which reads as a bug. The
// trace, the terminal and the window each write their numbers their way.
std::string list_text(const std::vector<double>& xs, const std::function<std::string(double)>& number);

// A number as a lesson shows it, in a stage's working and its out: line
// alike: `digits` significant digits (a class reads 0.9998, not 0.999838),
// whole when large (16610); a value that is not whole but rounds to a whole
// number keeps its zeros (10.9996 to four digits is "11.00": a bare "11"
// would read as exact); below a thousandth a power of ten with a digit
// fewer, so a list of probabilities reads alike (1.85×10⁻⁴ beside 8.97×10⁻⁵,
// not 0.000185), its zeros kept on the same rule (9.9999×10⁻⁶ is 1.00×10⁻⁵).
std::string shown_number(double x, int digits = 4);

// The figures of "a ÷ b = q" so that they divide on a calculator to q as
// printed, q being a ÷ b printed: figure(a, p) and figure(b, p) for the
// first p from `precision` (at most 4 more) where the quotient of the
// figures as printed, printed by `quotient`, is quotient(a ÷ b). Returns
// {a, b, q} as printed. (Lesson 14 printed "9.04 ÷ 1.51 ms = 5.98", which
// a calculator makes 5.99: the quotient of the unrounded times.)
struct Division {
    std::string a, b, q;
};
template <typename Figure, typename Quotient>
Division division(double a, double b, int precision, Figure figure, Quotient quotient);

struct Field {
    std::string key;    // snake_case, unique within the event: "distance_km", "raw_output"
    Value value;
    std::string unit;   // "km", "min", "" when dimensionless
    std::string label;  // for people: "distance"; empty → key
    // Significant digits a terminal or the window shows (shown_number); 0:
    // their default (four). A model whose working prints a value with more
    // sets as many, so the out: line reads as the working does.
    int digits = 0;
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

template <typename Figure, typename Quotient>
Division division(double a, double b, int precision, Figure figure, Quotient quotient) {
    const std::string q = quotient(b != 0 ? a / b : 0.0);
    Division d;
    for (int p = precision; p <= precision + 4; ++p) {
        d = {figure(a, p), figure(b, p), q};
        const double pb = std::strtod(d.b.c_str(), nullptr);
        if (pb != 0 && quotient(std::strtod(d.a.c_str(), nullptr) / pb) == q) break;
    }
    return d;
}

}  // namespace sixstep
