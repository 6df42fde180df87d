// Text as shown to people.
//
// quote_text: a token piece or a prompt, quoted, with newlines, tabs, quotes
// and other control characters escaped, so one value always stays on one
// line (" mat", "\n", "\"Yes").
//
// printable: any text made safe for a terminal, for messages that carry what
// a user or a file wrote (keys, names, values). Control characters — C0 and
// DEL, the C1 range (U+0080–U+009F, where U+009B is a terminal's CSI), and
// the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) —
// and bytes that are not UTF-8 become visible escapes (\x1b, \u009b, \xff),
// NUL included, so a message can neither drive the terminal nor be cut short
// by C string handling. Valid UTF-8 ("—", "预计") is kept as it is.
//
// elide: text longer than a limit cut in the middle, with a note of how
// much was left out, so a message that quotes a 100 KB value from a file
// stays a message ("kmxxxx … [99,812 bytes left out] … xxxx"). The head and
// the tail are kept because both say something: what was wrong, and the
// list of what would have been right.
//
// count_of: a count with its noun in the singular or the plural ("1 token",
// "6 tokens").
//
// readable_number: a number to `digits` significant digits as %g writes it,
// but with a power of ten where %g writes an exponent: "1.89×10¹³", not
// "1.89e+13" (a sentence for a class, in the window and the terminal).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep {

std::string quote_text(std::string_view text);

// ASCII letters in lower case, every other byte as it is ("GZIP" → "gzip";
// UTF-8 untouched): for names compared without case.
std::string ascii_lower(std::string_view text);

// keep_newlines keeps \n and \t as they are (narration that spans lines).
std::string printable(std::string_view text, bool keep_newlines = false);

// The offset of the first byte of `text` that does not begin a valid UTF-8
// sequence, or npos when all of it is UTF-8 (what JSON can carry).
std::size_t invalid_utf8_at(std::string_view text);

// At most about max_bytes (never cutting a UTF-8 sequence); text that fits
// is returned as it is.
std::string elide(std::string_view text, std::size_t max_bytes);

// printable(text), then elide(…, max_bytes): what a user, a file or a server
// wrote, shown on one line of bounded length.
std::string printable_cut(std::string_view text, std::size_t max_bytes);

// Length of the valid UTF-8 sequence starting at s[i] (1 to 4, its code
// point in cp), or 0 when the bytes there are not one: a stray continuation
// byte, an overlong form, a surrogate, a code point above U+10FFFF, or a
// sequence cut short. i < s.size().
std::size_t utf8_length(std::string_view s, std::size_t i, std::uint32_t& cp);

// A code point of the CJK scripts or their punctuation (CJK radicals to
// unified ideographs, compatibility ideographs, full-width forms): what needs
// the Chinese font, and what Chinese writes without spaces between.
bool is_cjk(std::uint32_t cp);

// Text that YAML's folded style (`>`) joined: each wrapped line break became
// a space, which Chinese does not put between its characters ("一个 小十倍").
// Drops every single space that has a CJK character (or CJK punctuation) on
// both sides; a space between Chinese and Latin text ("KV 缓存") stays.
std::string join_cjk_folds(std::string_view text);

// "1 token", "0 tokens", "6 tokens": `one` when n is 1, else `many`.
std::string count_of(std::size_t n, std::string_view one, std::string_view many);
// A field's unit for a value of `n`: "token" for 1 of "tokens" (and
// positions, steps, requests); any other unit as it is.
std::string_view unit_for_count(double n, std::string_view unit);
// A key as words, for a label: "express_lane" reads "express lane"; a GGUF
// name ("n_embd", "n_head_kv", "head_dim") and a sampler's ("top_k",
// "top_p", "min_p") keep their underscores, the names files, papers and
// APIs use; a GGUF type and a rate inside a key are written as such
// ("q4_0_over_q8_0_kl" reads "Q4_0 over Q8_0 kl", "decode_tok_s" "decode
// tok/s").
std::string key_as_words(std::string key);

// "1.85" and −4 as "1.85×10⁻⁴": the power of ten a class reads, shared by
// readable_number and shown_number.
std::string times_power_of_ten(std::string_view mantissa, int exponent);
std::string readable_number(double x, int digits = 3);


// "20 min" → {"20", " min"}: the finite number a text starts with, and what
// follows it (empty when the text is only the number); nothing when the text
// does not start with one. For messages that say "write 20".
struct LeadingNumber {
    std::string_view number, rest;
};
std::optional<LeadingNumber> leading_number(std::string_view text);

// The finite number the whole text is ("12", "-0.5", "1e3"), in strtod's
// decimal syntax; nothing for "", " 12", "12 ", "12 min", "nan", "1e999" or
// hexadecimal "0x10". For a value that must be a number and nothing more.
std::optional<double> whole_number_text(std::string_view text);

// The numbers a text lists, as a lesson writes a run of a list's elements:
// "5", "5, -2", "[5, −2]" (a typographic minus reads as "-"); nothing when
// any item is not a number, or the text is empty.
std::optional<std::vector<double>> number_list_text(std::string_view text);

}  // namespace sixstep
