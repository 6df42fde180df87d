// Numbers as the calculators show them, and the checks on numbers a person
// typed. Shared by the KV memory calculator, the bill, their CLI commands and
// (later) their panels, so that every front end prints "18.9 GB" the same way
// and refuses "-3 layers" with the same words.
//
//     bytes_decimal(18874368000) == "18.9 GB"      bytes_binary(147456) == "144 KiB"
//     with_commas(147456) == "147,456"             flops(7.7e9) == "7.7 GFLOP"
//     require_count("--layers", 36, 1e5) == 36     require_count("--layers", -3, …) throws
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace sixstep::serving {

// v rounded to `digits` significant digits, without trailing zeros or an
// exponent for ordinary magnitudes: 18.874 -> "18.9", 151.0 -> "151",
// 0.07429 -> "0.0743", 2.0 -> "2".
std::string significant(double v, int digits = 3);
// significant(v, digits), but with a power of ten for the very large or
// very small (|v| ≥ 10⁶ or < 10⁻³), as a class writes it: 4 digits of
// 1.2346×10¹⁷ printed as "123500000000000000" looked exact, and 4.86×10⁻⁷
// as "0.000000486".
std::string readable(double v, int digits = 3);

// Bytes in powers of 1000 (B, kB, MB, GB, TB, PB, EB) and of 1024 (B, KiB,
// MiB, …), 3 significant digits: "147 kB" / "144 KiB".
std::string bytes_decimal(double bytes);
std::string bytes_binary(double bytes);

// An integer with thousands separators: 18874368000 -> "18,874,368,000".
std::string with_commas(std::uint64_t n);
// A non-negative real with thousands separators, rounded to a whole number
// when it is one to within 1e-9, else to `decimals` places: "819,200",
// "3,844,352", "1,234.5".
std::string with_commas(double v, int decimals = 1);

// Floating-point operations with SI prefixes, 3 significant digits:
// "7.69 MFLOP", "18.9 PFLOP"; "… FLOP/s" for rates.
std::string flops(double n);
std::string flops_per_s(double n);

// A duration chosen for reading: "850 µs", "12.3 ms", "4.5 s", "3.2 min",
// "5.1 h", "2.3 days", "1.6 years" (365.25 days).
std::string duration(double seconds);

// Checks on a typed number; each throws sixstep::Error("<what>: …") with one
// clear reason: not a finite number, not positive, not whole, above `max`.
double require_positive(std::string_view what, double v);      // finite and > 0
double require_non_negative(std::string_view what, double v);  // finite and >= 0
double require_between(std::string_view what, double v, double lo, double hi);  // lo <= v <= hi (NaN is not)
// A whole number 1..max (max itself is named in the error: "at most 100,000").
std::int64_t require_count(std::string_view what, double v, std::int64_t max);

}  // namespace sixstep::serving
