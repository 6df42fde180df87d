// Quantities with units, as a request sends them: "3 km", "3000 m", "1.9 mi",
// "50%", "yes" — and as a Chinese lesson writes them: "3 公里", "50％", "是". Parsing is strict — a unit we don't know is an error, never a
// guess — because a silently misread unit is exactly the training/serving
// skew the delivery lessons warn about.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace sixstep::delivery {

enum class Dimension {
    length,  // converted to kilometres
    ratio,   // a fraction 0..1 ("0.5", "50%")
    flag,    // 0 or 1 ("0", "1", "yes", "no", "true", "false")
};

struct Quantity {
    double value = 0;   // the number as written
    std::string unit;   // the unit as written, lower-cased ("" when none)
    bool yes_no = false;  // written as a word, yes or no (是, true, …): 1 or 0
};

// Splits "3000 m" into {3000, "m"}. Throws sixstep::Error on text that is not
// a number followed by an optional unit, showing `example`: what a value of
// the kind asked for looks like.
Quantity parse_quantity(std::string_view text, std::string_view example = "e.g. \"3 km\"");

// The factor that converts `unit` to the dimension's training unit (km for
// length, fraction for ratio), or nullopt for a unit of another dimension.
// An empty unit means "already in the training unit".
std::optional<double> unit_factor(Dimension dim, std::string_view unit);

// "km", "fraction (0..1)", "0 or 1".
std::string_view training_unit(Dimension dim);

}  // namespace sixstep::delivery
