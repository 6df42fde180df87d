#include "pipeline/core/error.h"

namespace sixstep {

std::string SourceLocation::str() const {
    std::string s = file;
    if (line > 0) {
        s += ":" + std::to_string(line);
        if (column > 0) s += ":" + std::to_string(column);
    }
    return s;
}

Error Error::with_context(const std::string& context) const {
    if (where_.known()) return Error(where_, context + ": " + message_);
    return Error(context + ": " + message_);
}

}  // namespace sixstep
