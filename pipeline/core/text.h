// Text as shown to people: a token piece or a prompt, quoted, with newlines,
// tabs, quotes and other control characters escaped, so one value always
// stays on one line (" mat", "\n", "\"Yes").
#pragma once
#include <string>
#include <string_view>

namespace sixstep {

std::string quote_text(std::string_view text);

}  // namespace sixstep
