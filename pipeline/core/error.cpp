#include "pipeline/core/error.h"

#include <fmt/format.h>

#include "pipeline/core/text.h"

namespace sixstep {

std::string SourceLocation::str() const {
    if (line <= 0) return file;
    if (column <= 0) return fmt::format("{}:{}", file, line);
    return fmt::format("{}:{}:{}", file, line, column);
}

Error::Error(const std::string& message)
    : std::runtime_error(printable_cut(message, max_message_bytes)), message_(message) {}

Error::Error(SourceLocation where, const std::string& message)
    : std::runtime_error(printable_cut(where.known() ? where.str() + ": " + message : message, max_message_bytes)),
      where_(std::move(where)),
      message_(message) {}

Error Error::with_context(const std::string& context) const {
    if (where_.known()) return Error(where_, context + ": " + message_);
    return Error(context + ": " + message_);
}

}  // namespace sixstep
