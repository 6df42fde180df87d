#include "pipeline/core/text.h"

#include <fmt/format.h>

namespace sixstep {

std::string quote_text(std::string_view text) {
    std::string s = "\"";
    for (unsigned char c : text) {
        if (c == '\n') s += "\\n";
        else if (c == '\t') s += "\\t";
        else if (c == '\r') s += "\\r";
        else if (c == '"') s += "\\\"";
        else if (c < 0x20) s += fmt::format("\\x{:02x}", c);
        else s += static_cast<char>(c);
    }
    return s + "\"";
}

}  // namespace sixstep
