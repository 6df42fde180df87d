#include "pipeline/delivery/features.h"

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep::delivery {

int feature_index(std::string_view name) {
    for (int i = 0; i < n_features; ++i)
        if (features[static_cast<size_t>(i)].name == name) return i;
    return -1;
}

namespace {

// What a value of this kind looks like, for a message about one that is not.
const char* example(Dimension d) {
    switch (d) {
        case Dimension::length: return "e.g. \"3 km\", \"3000 m\", \"1.9 mi\"";
        case Dimension::ratio: return "a fraction 0..1 or a percentage: 0.3, \"30%\"";
        case Dimension::flag: return "0 or 1, yes or no";
    }
    return "";
}

}  // namespace

FeatureReading read_feature(const Feature& f, std::string_view raw, bool normalize) {
    FeatureReading r;
    try {
        r.written = parse_quantity(raw, example(f.dimension));
    } catch (const Error& e) {
        throw e.with_context(std::string(f.name));
    }
    // A yes or no for a distance or a share of congestion read as 1 or 0:
    // "congestion: yes" was full congestion, without a word.
    if (r.written.yes_no && f.dimension != Dimension::flag)
        throw Error(fmt::format("{}: \"{}\" is a yes/no answer, and {} is {}: {}", f.name, raw, f.name,
                                f.dimension == Dimension::length ? "a length" : "a share",
                                example(f.dimension)));
    r.x = r.written.value;
    if (!normalize) return r;
    const std::optional<double> factor = unit_factor(f.dimension, r.written.unit);
    if (!factor) {
        const char* hint = f.dimension == Dimension::length ? "use km, m or mi"
                           : f.dimension == Dimension::ratio ? "use a fraction 0..1 or %"
                                                             : "use 0/1, yes/no";
        throw Error(fmt::format("{}: unit \"{}\" is not a {} ({})", f.name, r.written.unit,
                                f.dimension == Dimension::length ? "length" : "valid unit here", hint));
    }
    r.factor = *factor;
    r.x = r.written.value * r.factor;
    if (f.dimension == Dimension::flag && r.x != 0 && r.x != 1)
        throw Error(fmt::format("{}: \"{}\" must be 0 or 1", f.name, raw));
    // A value out of the training range is answered with a warning (30 for
    // 30 % is lesson 2's slip); one no delivery can have is refused: "-3 km"
    // was answered "-1 minutes".
    if (r.x < 0)
        throw Error(fmt::format("{}: \"{}\" is negative; a {} is 0 or more", f.name, raw,
                                f.dimension == Dimension::length ? "distance" : "share of congestion"));
    return r;
}

}  // namespace sixstep::delivery
