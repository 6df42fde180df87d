#include "pipeline/core/env_choice.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/text.h"

namespace sixstep {

std::string_view env_choice(const char* name, std::initializer_list<std::string_view> choices) {
    const char* env = std::getenv(name);
    if (!env || !*env) return *choices.begin();
    for (std::string_view c : choices)
        if (c == env) return c;
    std::string list;  // "a or b", "a, b or c"
    std::size_t i = 0;
    for (std::string_view c : choices) {
        if (i > 0) list += i + 1 == choices.size() ? " or " : ", ";
        list += c;
        ++i;
    }
    throw Error(fmt::format("{}=\"{}\" is not a choice (use {})", name, elide(env, 40), list));
}

}  // namespace sixstep
