#include "pipeline/serving/quantity.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/text.h"

namespace sixstep::serving {

namespace {

// v rounded to `digits` significant digits (as a number).
double round_significant(double v, int digits) {
    if (v == 0 || !std::isfinite(v)) return v;
    const int exp = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    const double scale = std::pow(10.0, digits - 1 - exp);
    return std::round(v * scale) / scale;
}

// "1234567" -> "1,234,567" (digits only, no sign).
std::string group_thousands(const std::string& digits) {
    std::string out;
    const size_t n = digits.size();
    for (size_t i = 0; i < n; ++i) {
        out += digits[i];
        if (const size_t left = n - 1 - i; left > 0 && left % 3 == 0) out += ',';
    }
    return out;
}

// Scales v down by `base` until it reads below `base` (after rounding to 3
// significant digits), then prints it with the unit reached.
template <size_t N>
std::string scaled(double v, double base, const std::array<const char*, N>& units, const char* suffix = "") {
    if (!std::isfinite(v)) return fmt::format("{}", v);
    size_t u = 0;
    while (u + 1 < N && (std::fabs(v) >= base || std::fabs(round_significant(v, 3)) >= base)) {
        v /= base;
        ++u;
    }
    // Below the smallest unit, a power of ten: "6×10⁻¹⁸ FLOP", not "6e-18".
    if (u == 0 && v != 0 && std::fabs(v) < 1e-3) return fmt::format("{} {}{}", readable_number(v, 3), units[u], suffix);
    return fmt::format("{} {}{}", significant(v, 3), units[u], suffix);
}

// The number as the user typed it, for error messages: "-3", "1.5", "inf".
std::string typed(double v) { return fmt::format("{}", v); }

}  // namespace

std::string readable(double v, int digits) {
    const double a = std::fabs(v);
    return std::isfinite(v) && a != 0 && (a >= 1e6 || a < 1e-3) ? readable_number(v, digits) : significant(v, digits);
}

std::string significant(double v, int digits) {
    if (!std::isfinite(v)) return fmt::format("{}", v);
    if (v == 0) return "0";
    const double r = round_significant(v, digits);
    const int exp = static_cast<int>(std::floor(std::log10(std::fabs(r))));
    // Past 1e21 a fixed-point number is a wall of made-up digits; below 1e-9 of zeros.
    if (exp >= 21 || exp < -9) return fmt::format("{:.{}g}", r, digits);
    const int decimals = std::max(0, digits - 1 - exp);
    std::string s = fmt::format("{:.{}f}", r, decimals);
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s;
}

std::string bytes_decimal(double bytes) {
    static constexpr std::array<const char*, 7> units{"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    return scaled(bytes, 1000.0, units);
}

std::string bytes_binary(double bytes) {
    static constexpr std::array<const char*, 7> units{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    return scaled(bytes, 1024.0, units);
}

std::string with_commas(std::uint64_t n) { return group_thousands(std::to_string(n)); }

std::string with_commas(double v, int decimals) {
    if (!std::isfinite(v)) return fmt::format("{}", v);
    const std::string sign = v < 0 ? "-" : "";
    v = std::fabs(v);
    const double whole = std::round(v);
    if (std::fabs(v - whole) <= 1e-9 * std::max(1.0, v))
        return sign + group_thousands(fmt::format("{:.0f}", whole));
    const std::string s = fmt::format("{:.{}f}", v, decimals);
    const size_t dot = s.find('.');
    return sign + group_thousands(s.substr(0, dot)) + (dot == std::string::npos ? "" : s.substr(dot));
}

std::string flops(double n) {
    static constexpr std::array<const char*, 9> units{"", "k", "M", "G", "T", "P", "E", "Z", "Y"};
    return scaled(n, 1000.0, units, "FLOP");
}

std::string flops_per_s(double n) { return flops(n) + "/s"; }

std::string duration(double s) {
    if (!std::isfinite(s)) return fmt::format("{} s", s);
    const double a = std::fabs(s);
    if (a == 0) return "0 s";
    if (a < 1e-3) return significant(s * 1e6, 3) + " µs";
    if (a < 1) return significant(s * 1e3, 3) + " ms";
    if (a < 60) return significant(s, 3) + " s";
    if (a < 3600) return significant(s / 60, 3) + " min";
    if (a < 86400) return significant(s / 3600, 3) + " h";
    if (a < 365.25 * 86400) return significant(s / 86400, 3) + " days";
    const double years = s / (365.25 * 86400);
    // Millions of years: a power of ten, not digits that look exact.
    return (years >= 1e6 ? readable_number(years, 3) : significant(years, 3)) + " years";
}

double require_positive(std::string_view what, double v) {
    if (!std::isfinite(v)) throw Error(fmt::format("{}: {} is not a finite number", what, typed(v)));
    if (v <= 0) throw Error(fmt::format("{}: must be greater than 0, got {}", what, typed(v)));
    return v;
}

double require_non_negative(std::string_view what, double v) {
    if (!std::isfinite(v)) throw Error(fmt::format("{}: {} is not a finite number", what, typed(v)));
    if (v < 0) throw Error(fmt::format("{}: must not be negative, got {}", what, typed(v)));
    return v;
}

double require_between(std::string_view what, double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) throw Error(fmt::format("{}: must be from {:g} to {:g}, got {}", what, lo, hi, v));
    return v;
}

std::int64_t require_count(std::string_view what, double v, std::int64_t max) {
    if (!std::isfinite(v)) throw Error(fmt::format("{}: {} is not a finite number", what, typed(v)));
    if (v < 1) throw Error(fmt::format("{}: must be at least 1, got {}", what, typed(v)));
    if (v != std::floor(v)) throw Error(fmt::format("{}: must be a whole number, got {}", what, typed(v)));
    if (v > static_cast<double>(max))
        throw Error(fmt::format("{}: {} is absurdly large (at most {})", what, typed(v),
                                with_commas(static_cast<std::uint64_t>(max))));
    return static_cast<std::int64_t>(v);
}

}  // namespace sixstep::serving
