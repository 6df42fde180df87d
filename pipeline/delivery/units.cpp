#include "pipeline/delivery/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "pipeline/core/error.h"

namespace sixstep::delivery {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

Quantity parse_quantity(std::string_view text) {
    const std::string_view s = trim(text);
    if (s.empty()) throw Error("empty value: expected a number with an optional unit, e.g. \"3 km\"");
    const std::string word = lower(s);
    if (word == "yes" || word == "true") return {1, ""};
    if (word == "no" || word == "false") return {0, ""};

    double value = 0;
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (*first == '+') ++first;  // from_chars rejects a leading '+'
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || !std::isfinite(value))
        throw Error("\"" + std::string(s) + "\" is not a number with an optional unit (e.g. \"3 km\")");
    std::string unit = lower(trim(std::string_view(ptr, static_cast<size_t>(last - ptr))));
    for (char c : unit)
        if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '%'))
            throw Error("\"" + std::string(s) + "\" has an unreadable unit \"" + unit + "\"");
    return {value, unit};
}

std::optional<double> unit_factor(Dimension dim, std::string_view unit) {
    if (unit.empty()) return 1.0;
    switch (dim) {
        case Dimension::length: {
            static constexpr std::pair<std::string_view, double> lengths[] = {
                {"km", 1.0},     {"kilometre", 1.0}, {"kilometres", 1.0}, {"kilometer", 1.0},
                {"kilometers", 1.0}, {"m", 0.001},   {"metre", 0.001},    {"metres", 0.001},
                {"meter", 0.001},    {"meters", 0.001}, {"mi", 1.609344}, {"mile", 1.609344},
                {"miles", 1.609344}};
            for (auto [name, f] : lengths)
                if (name == unit) return f;
            return std::nullopt;
        }
        case Dimension::ratio:
            if (unit == "%") return 0.01;
            return std::nullopt;
        case Dimension::flag:
            return std::nullopt;
    }
    return std::nullopt;
}

std::string_view training_unit(Dimension dim) {
    switch (dim) {
        case Dimension::length: return "km";
        case Dimension::ratio: return "fraction (0..1)";
        case Dimension::flag: return "0 or 1";
    }
    return "";
}

}  // namespace sixstep::delivery
