#include "pipeline/core/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "pipeline/core/text.h"
#include "pipeline/core/trace_keys.h"

namespace sixstep {

namespace {
std::string format_number(double x, int precision) {
    if (x == 0) x = 0;  // no "-0"
    // A whole number, or one too large for `precision` digits, is written
    // whole, not with an exponent: 1229 days, not 1.23e+03 (a class reads
    // the first; a knob slider's value keeps its units).
    if (std::isfinite(x) && std::fabs(x) < 1e15 && (x == std::round(x) || std::fabs(x) >= std::pow(10.0, precision)))
        return fmt::format("{:.0f}", x);
    return fmt::format("{:.{}g}", x, precision);
}
}  // namespace

std::string shown_number(double x, int digits) {
    digits = std::max(digits, 2);
    if (x != 0 && std::isfinite(x) && std::fabs(x) < 1e-3) {
        // "1.85e-04" → "1.85×10⁻⁴"; "8.80e-07" → "8.8×10⁻⁷", as %g trims; "1.00e-05"
        // of a value that is not 10⁻⁵ keeps its zeros.
        const std::string e = fmt::format("{:.{}e}", x, digits - 2);
        const std::size_t at = e.find('e');
        std::string mantissa = e.substr(0, at);
        if (const std::size_t point = mantissa.find('.'); point != std::string::npos) {
            const std::size_t last = mantissa.find_last_not_of('0');
            const bool whole = last == point;
            if (!whole) mantissa.erase(last + 1);
            else if (std::strtod(e.c_str(), nullptr) == x) mantissa.erase(point);
        }
        return times_power_of_ten(mantissa, std::atoi(e.c_str() + at + 1));
    }
    const std::string s = format_number(x, digits);
    // A value that is not whole but rounds to a whole number keeps its zeros
    // (10.9996 is "11.00", 0.99999 "1.000").
    const double whole = std::round(x);
    if (std::isfinite(x) && x != whole && std::fabs(whole) >= 1 && std::fabs(whole) < std::pow(10.0, digits - 1) &&
        s.find_first_of(".e") == std::string::npos) {
        const int int_digits = static_cast<int>(std::floor(std::log10(std::fabs(whole)))) + 1;
        return fmt::format("{:.{}f}", x, digits - int_digits);
    }
    return s;
}

std::string format_value(const Value& v, int precision) {
    if (auto* d = std::get_if<double>(&v)) return format_number(*d, precision);
    if (auto* s = std::get_if<std::string>(&v)) return *s;
    return list_text(std::get<std::vector<double>>(v), [&](double x) { return format_number(x, precision); });
}

std::string list_text(const std::vector<double>& xs, const std::function<std::string(double)>& number) {
    std::string out = "[";
    for (std::size_t i = 0; i < xs.size(); ++i)
        out += (i ? ", " : "") + (std::isnan(xs[i]) ? std::string("\u2014") : number(xs[i]));
    return out + "]";
}

TraceEvent& TraceEvent::in(std::string key, Value v, std::string unit, std::string label) {
    inputs.push_back({std::move(key), std::move(v), std::move(unit), std::move(label)});
    return *this;
}

TraceEvent& TraceEvent::out(std::string key, Value v, std::string unit, std::string label) {
    outputs.push_back({std::move(key), std::move(v), std::move(unit), std::move(label)});
    return *this;
}

TraceEvent& TraceEvent::says(std::string line) {
    arithmetic.push_back(std::move(line));
    return *this;
}

const Field* TraceEvent::find(std::string_view key) const {
    for (const auto& f : outputs)
        if (f.key == key) return &f;
    for (const auto& f : inputs)
        if (f.key == key) return &f;
    return nullptr;
}

const TraceEvent* Trace::last(Stage s) const {
    for (auto it = events_.rbegin(); it != events_.rend(); ++it)
        if (it->stage == s) return &*it;
    return nullptr;
}

std::optional<Value> Trace::lookup(std::string_view path) const {
    auto dot = path.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    auto stage = parse_stage(path.substr(0, dot));
    if (!stage) return std::nullopt;
    const TraceEvent* ev = last(*stage);
    if (!ev) return std::nullopt;
    auto key = path.substr(dot + 1);
    if (key == keys::ms) return Value{ev->elapsed_ms};
    if (key == keys::warnings) {
        std::string all;
        for (const auto& w : ev->warnings) all += (all.empty() ? "" : "; ") + w;
        return Value{all};
    }
    if (const Field* f = ev->find(key)) return f->value;
    return std::nullopt;
}

}  // namespace sixstep
