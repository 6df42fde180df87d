#include "pipeline/delivery/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "pipeline/core/error.h"
#include "pipeline/core/text.h"

namespace sixstep::delivery {

namespace {

// Spaces, and the full-width space a Chinese input method types ("3　公里").
std::string_view trim(std::string_view s) {
    constexpr std::string_view wide = "\u3000";
    for (;;) {
        if (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
        else if (s.substr(0, wide.size()) == wide) s.remove_prefix(wide.size());
        else if (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
        else if (s.size() >= wide.size() && s.substr(s.size() - wide.size()) == wide) s.remove_suffix(wide.size());
        else break;
    }
    return s;
}


}  // namespace

Quantity parse_quantity(std::string_view text, std::string_view example) {
    const std::string_view s = trim(text);
    if (s.empty()) throw Error("empty value: expected a number with an optional unit (" + std::string(example) + ")");
    const std::string word = ascii_lower(s);
    if (word == "yes" || word == "true" || word == "on" || word == "是") return {1, "", true};
    if (word == "no" || word == "false" || word == "off" || word == "否") return {0, "", true};

    double value = 0;
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (*first == '+') ++first;  // from_chars rejects a leading '+'
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || !std::isfinite(value))
        throw Error("\"" + std::string(s) + "\" is not a number with an optional unit (" + std::string(example) + ")");
    // "3,5 km": a decimal comma, read as 3 and a unit ",5 km" — say so.
    if (last - ptr >= 2 && *ptr == ',' && std::isdigit(static_cast<unsigned char>(ptr[1])))
        throw Error("\"" + std::string(s) + "\" has a decimal comma: write the decimal point as \".\"");
    std::string unit = ascii_lower(trim(std::string_view(ptr, static_cast<size_t>(last - ptr))));
    // Letters, '%', and any character beyond ASCII (公里, ％): whether it
    // is a unit of the right kind is unit_factor's answer.
    for (char c : unit)
        if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '%' || static_cast<unsigned char>(c) >= 0x80))
            throw Error("\"" + std::string(s) + "\" has an unreadable unit \"" + unit + "\"");
    return {value, unit, false};
}

std::optional<double> unit_factor(Dimension dim, std::string_view unit) {
    if (unit.empty()) return 1.0;
    switch (dim) {
        case Dimension::length: {
            static constexpr std::pair<std::string_view, double> lengths[] = {
                {"km", 1.0},     {"kilometre", 1.0}, {"kilometres", 1.0}, {"kilometer", 1.0},
                {"kilometers", 1.0}, {"m", 0.001},   {"metre", 0.001},    {"metres", 0.001},
                {"meter", 0.001},    {"meters", 0.001}, {"mi", 1.609344}, {"mile", 1.609344},
                {"miles", 1.609344}, {"公里", 1.0}, {"千米", 1.0}, {"米", 0.001}, {"英里", 1.609344}};
            for (auto [name, f] : lengths)
                if (name == unit) return f;
            return std::nullopt;
        }
        case Dimension::ratio:
            if (unit == "%" || unit == "％") return 0.01;  // the full-width sign too
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
