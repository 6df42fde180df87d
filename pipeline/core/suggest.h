// "Did you mean": the closest known name to a mistyped one, so an error can
// offer the fix ("unknown knob \"temprature\" — did you mean \"temperature\"?").
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace sixstep {

// Levenshtein distance: insertions, deletions and substitutions, one each.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is at most two edits away and
// those do not rewrite every letter (the first one on a tie); empty when
// none is that close.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

// " — did you mean \"x\"?" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c": the candidates joined for a "(known: …)" list.
std::string join_names(const std::vector<std::string>& names, std::string_view separator = ", ");

}  // namespace sixstep
