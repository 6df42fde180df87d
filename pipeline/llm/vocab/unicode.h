// The little Unicode the tokenizers need: lenient UTF-8 decoding that keeps
// every input byte, general-category groups (\p{L}, \p{N}, ...) and
// White_Space, and GPT-2's byte <-> printable-character mapping.
//
// Decoding never fails: a byte that does not start a valid UTF-8 sequence
// becomes one "invalid" code point of its own, so tokenizers can carry any
// byte string through and decode(encode(bytes)) == bytes still holds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep::llm {

// General category, by its first letter; Other also covers unassigned code
// points and invalid bytes.
enum class UnicodeCategory : uint8_t { Other = 0, Letter = 1, Mark = 2, Number = 3, Punctuation = 4, Symbol = 5, Separator = 6, Control = 7 };

UnicodeCategory unicode_category(uint32_t cp);
// The White_Space property (\s in the tokenizer regexes).
bool unicode_is_whitespace(uint32_t cp);

// One decoded character and the bytes it came from.
struct Utf8Char {
    uint32_t cp;       // the code point; kInvalidCodepoint for an invalid byte
    uint32_t offset;   // byte offset in the text
    uint32_t length;   // 1..4 bytes
};
inline constexpr uint32_t kInvalidCodepoint = 0xFFFFFFFFu;

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes
// there are not one (bad lead byte, bad or missing continuation, overlong,
// surrogate, beyond U+10FFFF).
size_t utf8_valid_length(std::string_view s, size_t i);
// Decodes the whole text (invalid bytes become kInvalidCodepoint, length 1).
std::vector<Utf8Char> utf8_decode(std::string_view s);
// Appends the UTF-8 encoding of cp (must be a valid scalar value).
void utf8_append(std::string& out, uint32_t cp);
// Number of bytes a sequence starting with this lead byte claims (1 for an
// invalid lead byte).
inline size_t utf8_sequence_length(unsigned char lead) {
    if (lead < 0x80) return 1;
    if ((lead & 0xe0) == 0xc0) return 2;
    if ((lead & 0xf0) == 0xe0) return 3;
    if ((lead & 0xf8) == 0xf0) return 4;
    return 1;
}
// Bytes at the end of s that form an incomplete-but-so-far-valid UTF-8
// sequence (0 when s ends on a character boundary or with an invalid byte):
// what a streaming decoder must hold back.
size_t utf8_incomplete_tail(std::string_view s);

// GPT-2 byte-level BPE represents each byte as a printable character:
// bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF as themselves, the other 68 as
// U+0100 upwards in byte order (space 0x20 -> U+0120 'Ġ', '\n' -> U+010A 'Ċ').
uint32_t gpt2_byte_to_codepoint(uint8_t b);
// The UTF-8 text of gpt2_byte_to_codepoint(b), from a table.
const std::string& gpt2_byte_to_utf8(uint8_t b);
// Inverse; returns -1 for a code point that is not one of the 256.
int gpt2_codepoint_to_byte(uint32_t cp);

namespace unicode_detail {
struct CategoryRange {
    uint32_t first, last;
    uint8_t category;
};
extern const CategoryRange kCategoryRanges[];
extern const size_t kCategoryRangeCount;
}  // namespace unicode_detail

}  // namespace sixstep::llm
