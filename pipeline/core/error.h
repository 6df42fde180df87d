// sixstep::Error — the one exception type the engine throws for bad input.
//
// The engine never exits or prints: it throws, and each layer that knows more
// context adds it ("error loading model: tensor blk.3.attn_q.weight: data
// beyond end of file"). Front ends catch it once, print one clear message and
// choose the exit code. `where` holds file:line:column when there is a file.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace sixstep {

struct SourceLocation {
    std::string file;  // path as the user gave it
    int line = 0;      // 1-based; 0 = unknown
    int column = 0;    // 1-based; 0 = unknown
    bool known() const { return !file.empty(); }
    std::string str() const;  // "file:line:column", "file:line" or "file"
};

// what() is "file:line:column: message" made printable (pipeline/core/text.h):
// control characters and bytes that are not UTF-8 escaped, so a message that
// quotes a file can neither drive the terminal nor be cut at a NUL byte,
// and cut in the middle past 2,000 bytes (elide). message() keeps the text
// as given, whole: an error wrapped in another (with_context) is cut once,
// when it is shown.
// A message that quotes what a file held (a key, a value, a unit) is cut in
// the middle past this length: one clear line, not 100 KB of it.
inline constexpr std::size_t max_message_bytes = 2000;

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message);
    Error(SourceLocation where, const std::string& message);

    const SourceLocation& where() const { return where_; }
    const std::string& message() const { return message_; }  // without the location

    // Returns a copy with outer context prepended: "loading lesson: <message>".
    Error with_context(const std::string& context) const;

private:
    SourceLocation where_;
    std::string message_;
};

}  // namespace sixstep
