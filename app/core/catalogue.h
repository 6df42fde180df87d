// The message catalogue: every string sixstep's engine and window show, in
// English (the key, as in gettext) and Chinese. A catalogue has exact entries
// ("Timing" → "耗时") and patterns whose {} holes carry numbers or names
// ("step {}: done" → "第 {} 步：完成"); a hole's text is itself looked up, so
// "{} min" with "11" gives "11 分钟". Text whose every word is one the
// language keeps in English ("KV", "ms", a formula's "b" and "w") is its own
// translation, and so is text without letters.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sixstep::app {

// One piece of a pattern: the literal text before a hole (or after the
// last), and whether that hole is "{=}" (kept verbatim) rather than "{}".
struct PatternPiece {
    std::string_view literal;
    bool verbatim = false;
};
std::vector<PatternPiece> split_pattern(std::string_view pattern);

struct Catalogue {
    using Entries = std::vector<std::pair<std::string_view, std::string_view>>;
    Entries exact;
    Entries patterns;                    // with {} holes, tried in order
    std::set<std::string_view> kept;     // words the language keeps in English: "KV", "ms", "b"
    std::unordered_map<std::string_view, std::string_view> index;  // of `exact`
    std::vector<std::pair<std::vector<PatternPiece>, std::vector<PatternPiece>>> split;  // of `patterns`

    Catalogue(Entries exact_entries, Entries pattern_entries, std::set<std::string_view> kept_words);

    // A word the language keeps as it is: one of `kept`, notation (a letter
    // and digits: layer L0, head H1, p99, v2, F11) or a checksum (8 or more
    // hex digits: "ff5fe1dc27d634d9").
    bool keeps(std::string_view word) const;
};

// The catalogue for a language ("zh"); nullptr for English and unknown ones.
const Catalogue* catalogue(std::string_view lang);

// The translation of `en`, or nothing when the catalogue has no entry for it
// (English itself always translates to itself). Text without letters (numbers,
// punctuation, units' symbols) is its own translation.
std::optional<std::string> translate(std::string_view lang, std::string_view en);

// Every translated string of a language, for the font atlas's glyphs.
std::string all_translations(std::string_view lang);

}  // namespace sixstep::app
