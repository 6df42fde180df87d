// env_choice: a switch read from the environment that takes one of a few
// words, the first of them when the variable is unset or empty. Any other
// value throws sixstep::Error naming the variable and the value (a long one
// shortened):
//     SIXSTEP_WEIGHTS="paged" is not a choice (use copied or mapped)
//
//     const bool copy = env_choice("SIXSTEP_WEIGHTS", {"copied", "mapped"}) == "copied";
#pragma once
#include <initializer_list>
#include <string_view>

namespace sixstep {

// The word chosen: one of `choices` (which must not be empty), as given there.
std::string_view env_choice(const char* name, std::initializer_list<std::string_view> choices);

}  // namespace sixstep
