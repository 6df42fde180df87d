#include "app/core/catalogue.h"

#include <algorithm>
#include <cctype>

#include "pipeline/core/text.h"

namespace sixstep::app {

Catalogue::Catalogue(Entries exact_entries, Entries pattern_entries, std::set<std::string_view> kept_words)
    : exact(std::move(exact_entries)), patterns(std::move(pattern_entries)), kept(std::move(kept_words)) {
    for (const auto& [en, tr] : exact) index.emplace(en, tr);
    for (const auto& [en, tr] : patterns) split.emplace_back(split_pattern(en), split_pattern(tr));
}

std::vector<PatternPiece> split_pattern(std::string_view pattern) {
    std::vector<PatternPiece> out;
    size_t from = 0;
    while (true) {
        const size_t a = pattern.find("{}", from), b = pattern.find("{=}", from);
        const size_t at = std::min(a, b);
        if (at == std::string_view::npos) {
            out.push_back({pattern.substr(from), false});
            return out;
        }
        out.push_back({pattern.substr(from, at - from), at == b});
        from = at + (at == b ? 3 : 2);
    }
}

bool Catalogue::keeps(std::string_view w) const {
    if (kept.count(w)) return true;
    auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    if (w.size() >= 2 && std::all_of(w.begin() + 1, w.end(), digit)) return true;
    return w.size() >= 8 &&
           std::all_of(w.begin(), w.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// Defined in catalogue_zh.cpp.
const Catalogue& chinese_catalogue();

const Catalogue* catalogue(std::string_view lang) {
    if (lang == "zh") return &chinese_catalogue();
    return nullptr;
}

namespace {

bool letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// True when every word of s (a run of letters, digits and _ that starts with
// a letter) is one the catalogue keeps: then s is its own translation.
bool all_kept(const Catalogue& cat, std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        if (!letter(s[i])) {
            // A digit run may carry letters ("1e-5", "8x"): skip it whole.
            if (std::isdigit(static_cast<unsigned char>(s[i]))) {
                while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
            } else {
                ++i;
            }
            continue;
        }
        size_t j = i;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
        if (!cat.keeps(s.substr(i, j - i))) return false;
        i = j;
    }
    return true;
}

// `budget` bounds the work of one translation: the general patterns ("{} → {}",
// "{}; {}") nest, and text the lesson wrote ("a; b → c; (d) …") must not
// make a lookup take exponential time. Out of budget: no translation.
std::optional<std::string> lookup(const Catalogue& cat, std::string_view en, int depth, int& budget);

// A pattern's holes: "{}" is looked up in the catalogue (numbers pass as
// they are), "{=}" is kept verbatim (a name the lesson or the model chose).
using Piece = PatternPiece;

// Matches `en` against an English pattern; on success fills `holes`.
bool match(const std::vector<Piece>& pieces, std::string_view en, std::vector<std::string_view>& holes) {
    holes.clear();
    if (pieces.size() == 1) return en == pieces.front().literal;
    if (en.substr(0, pieces.front().literal.size()) != pieces.front().literal) return false;
    size_t at = pieces.front().literal.size();
    for (size_t i = 1; i < pieces.size(); ++i) {
        const std::string_view lit = pieces[i].literal;
        size_t next;
        if (i + 1 == pieces.size()) {
            // The last literal ends the string. A sentence's closing period
            // is not a last hole's: "knee: batch 16." is "{}." around
            // "knee: batch {}", so the period becomes the language's own.
            if (en.size() < at + lit.size() + 1 || en.substr(en.size() - lit.size()) != lit) return false;
            next = en.size() - lit.size();
            if (lit.empty() && en.back() == '.') return false;
        } else {
            if (lit.empty()) return false;  // two holes side by side: ambiguous
            next = en.find(lit, at + 1);
            if (next == std::string_view::npos) return false;
        }
        if (next <= at) return false;  // an empty hole
        holes.push_back(en.substr(at, next - at));
        at = next + lit.size();
    }
    return true;
}

// The code point of the character that starts at s[i], or 0 where there is
// none or the bytes are not UTF-8.
std::uint32_t code_point_at(std::string_view s, size_t i) {
    std::uint32_t cp = 0;
    return i < s.size() && utf8_length(s, i, cp) > 0 ? cp : 0;
}

// The code point of the last character of `s` (0 when none).
std::uint32_t last_code_point(std::string_view s) {
    size_t i = s.size();
    while (i > 0 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i;  // back over continuation bytes
    return i == 0 ? 0 : code_point_at(s, i - 1);
}

// A pattern spaces a number from the words around it ("{} 个请求": "3 个请求"),
// but a count written "1万" ends in an ideograph, and Chinese puts no space
// between two of them: "1万个请求", not "1万 个请求".
std::string_view after_hole(std::string_view hole_text, std::string_view literal) {
    if (literal.size() > 1 && literal.front() == ' ' && is_cjk(code_point_at(literal, 1)) &&
        is_cjk(last_code_point(hole_text)))
        return literal.substr(1);
    return literal;
}

std::optional<std::string> fill(const Catalogue& cat, const std::vector<Piece>& out_pieces,
                                const std::vector<Piece>& en_pieces, const std::vector<std::string_view>& holes,
                                int depth, int& budget) {
    if (out_pieces.size() != en_pieces.size()) return std::nullopt;  // a catalogue mistake; the test names it
    std::string out(out_pieces.front().literal);
    for (size_t i = 0; i < holes.size(); ++i) {
        if (en_pieces[i].verbatim) {
            out += holes[i];
            out += out_pieces[i + 1].literal;
        } else {
            std::optional<std::string> h = lookup(cat, holes[i], depth + 1, budget);
            if (!h) return std::nullopt;
            out += *h;
            out += after_hole(*h, out_pieces[i + 1].literal);
        }
    }
    return out;
}

std::optional<std::string> lookup(const Catalogue& cat, std::string_view en, int depth, int& budget) {
    if (--budget < 0) return std::nullopt;
    // An entry first: "tok" (the timeline's tokenize bar) and "tok/s" are
    // entries though "tok" is a kept word of units elsewhere.
    if (auto it = cat.index.find(en); it != cat.index.end()) return std::string(it->second);
    if (all_kept(cat, en)) return std::string(en);
    // Surrounding spaces are layout, not words.
    const size_t first = en.find_first_not_of(' '), last = en.find_last_not_of(' ');
    if (first != 0 || last + 1 != en.size()) {
        std::optional<std::string> inner = lookup(cat, en.substr(first, last + 1 - first), depth, budget);
        if (!inner) return std::nullopt;
        return std::string(en.substr(0, first)) + *inner + std::string(en.substr(last + 1));
    }
    if (depth > 8) return std::nullopt;  // a sampler chain nests one level per stage
    std::vector<std::string_view> holes;
    for (const auto& [pieces, translated] : cat.split) {
        if (!match(pieces, en, holes)) continue;
        if (std::optional<std::string> out = fill(cat, translated, pieces, holes, depth, budget)) return out;
    }
    // A phrase that begins a sentence ("No knee: …" after "… as long.") is
    // the catalogue's lower-case entry.
    const auto upper = [&](size_t i) { return i < en.size() && std::isupper(static_cast<unsigned char>(en[i])); };
    if (upper(0) && !upper(1)) {  // "No", not "KV"
        std::string lower(en);
        lower.front() = static_cast<char>(std::tolower(static_cast<unsigned char>(lower.front())));
        return lookup(cat, lower, depth + 1, budget);
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> translate(std::string_view lang, std::string_view en) {
    const Catalogue* cat = catalogue(lang);
    if (!cat) return std::string(en);
    // A screen's words are short; a long text (a story, a file's contents)
    // is the lesson's or the model's, never the catalogue's.
    if (en.size() > 4096) return std::nullopt;
    int budget = 2000;
    return lookup(*cat, en, 0, budget);
}

std::string all_translations(std::string_view lang) {
    std::string out;
    if (const Catalogue* cat = catalogue(lang)) {
        for (const auto& [en, tr] : cat->exact) out += tr;
        for (const auto& [en, tr] : cat->patterns) out += tr;
    }
    return out;
}

}  // namespace sixstep::app
