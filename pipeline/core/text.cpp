#include "pipeline/core/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

namespace sixstep {

std::size_t utf8_length(std::string_view s, std::size_t i, std::uint32_t& cp) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    std::size_t n;
    std::uint32_t min;
    if (c < 0x80) {
        cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        n = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (b(k) & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

namespace {

// The embeddings, overrides and isolates of bidirectional text (U+202A–202E,
// U+2066–2069): a right-to-left override in a lesson title turned the rest of
// the terminal's line around. Plain direction marks (U+200E, 200F) stay.
bool is_bidi_control(std::uint32_t cp) { return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069); }

// Appends s with control characters and invalid bytes escaped; `quote` adds
// the escapes quote_text needs for its quotes.
void escape_into(std::string& out, std::string_view s, bool keep_newlines, bool quote) {
    for (std::size_t i = 0; i < s.size();) {
        std::uint32_t cp = 0;
        const std::size_t n = utf8_length(s, i, cp);
        if (n == 0) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
            ++i;
            continue;
        }
        if (cp == '\n' && !keep_newlines) out += "\\n";
        else if (cp == '\t' && !keep_newlines) out += "\\t";
        else if (cp == '\r') out += "\\r";
        else if (cp == '"' && quote) out += "\\\"";
        else if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f) out += fmt::format("\\x{:02x}", cp);
        else if ((cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp)) out += fmt::format("\\u{:04x}", cp);
        else out.append(s, i, n);
        i += n;
    }
}

}  // namespace

std::string quote_text(std::string_view text) {
    std::string s = "\"";
    escape_into(s, text, false, true);
    return s + "\"";
}

std::string printable(std::string_view text, bool keep_newlines) {
    std::string s;
    s.reserve(text.size());
    escape_into(s, text, keep_newlines, false);
    return s;
}

std::size_t invalid_utf8_at(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        std::uint32_t cp = 0;
        const std::size_t n = utf8_length(text, i, cp);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

std::string elide(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return std::string(text);
    // Steps back from `i` to the start of a UTF-8 sequence (a byte that is
    // not a continuation byte), at most 3 bytes: invalid text cuts anywhere.
    const auto sequence_start = [&](std::size_t i) {
        for (int k = 0; k < 3 && i > 0 && i < text.size() && (static_cast<unsigned char>(text[i]) & 0xc0) == 0x80; ++k)
            --i;
        return i;
    };
    const std::size_t head = sequence_start(max_bytes * 2 / 3);
    const std::size_t tail = sequence_start(text.size() - max_bytes / 3);
    return fmt::format("{} … [{} bytes left out] … {}", text.substr(0, head), fmt::group_digits(tail - head),
                       text.substr(tail));
}

std::string printable_cut(std::string_view text, std::size_t max_bytes) { return elide(printable(text), max_bytes); }

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

bool is_cjk(std::uint32_t cp) {
    return (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFF00 && cp <= 0xFFEF);
}

std::string join_cjk_folds(std::string_view text) {
    // The code point starting at i, or 0 (not CJK) where there is none or the bytes are not UTF-8.
    const auto at = [&](std::size_t i) {
        std::uint32_t cp = 0;
        return i < text.size() && utf8_length(text, i, cp) > 0 ? cp : 0;
    };
    std::string out;
    out.reserve(text.size());
    std::uint32_t prev = 0;  // the code point before i
    for (std::size_t i = 0; i < text.size();) {
        std::uint32_t cp = 0;
        const std::size_t len = utf8_length(text, i, cp);
        if (len == 0) cp = 0;  // not UTF-8: no code point, whatever it half-decoded to
        const std::size_t n = std::max<std::size_t>(1, len);
        if (cp == ' ' && is_cjk(prev) && is_cjk(at(i + 1))) {
            ++i;  // prev stays: the next character follows it directly
            continue;
        }
        out.append(text.substr(i, n));
        prev = cp;
        i += n;
    }
    return out;
}

std::string count_of(std::size_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string_view unit_for_count(double n, std::string_view unit) {
    static constexpr std::pair<std::string_view, std::string_view> nouns[] = {
        {"tokens", "token"}, {"positions", "position"}, {"steps", "step"}, {"requests", "request"}};
    if (n != 1) return unit;
    for (const auto& [many, one] : nouns)
        if (unit == many) return one;
    return unit;
}

std::string key_as_words(std::string key) {
    if (key.rfind("n_", 0) == 0 || key == "head_dim") return key;
    if (key == "top_k" || key == "top_p" || key == "min_p") return key;  // the sampler's names, its table's heads
    std::vector<std::string> parts;
    for (std::size_t from = 0;;) {
        const std::size_t to = key.find('_', from);
        parts.push_back(key.substr(from, to == std::string::npos ? std::string::npos : to - from));
        if (to == std::string::npos) break;
        from = to + 1;
    }
    const auto digits = [](std::string_view s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    const auto upper = [](std::string s) {
        for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return s;
    };
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        std::string word = parts[i];
        const bool has_next = i + 1 < parts.size();
        if (has_next && word.size() >= 2 && word[0] == 'q' && digits(std::string_view(word).substr(1)) &&
            digits(parts[i + 1])) {
            word = upper(word) + "_" + parts[++i];  // a GGUF type: "q8_0_file_ratio" reads "Q8_0 file ratio"
        } else if ((word == "f16" || word == "f32" || word == "bf16") && (has_next || i > 0)) {
            word = upper(word);
        } else if (has_next && (word == "tok" || word == "req") && parts[i + 1] == "s") {
            word += "/s", ++i;  // a rate: "decode_tok_s" reads "decode tok/s"
        }
        if (!out.empty()) out += ' ';
        out += word;
    }
    return out;
}

std::string times_power_of_ten(std::string_view mantissa, int exponent) {
    static constexpr const char* superscript[] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                                  "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
    std::string out = std::string(mantissa) + "\u00d710";
    if (exponent < 0) out += "\u207b";
    for (const char digit : std::to_string(std::abs(exponent))) out += superscript[digit - '0'];
    return out;
}

std::string readable_number(double x, int digits) {
    const std::string g = fmt::format("{:.{}g}", x, std::max(digits, 1));  // %g's rounding: 9.999e-06 → 1e-05
    const std::size_t e = g.find('e');
    if (e == std::string::npos) return g;
    return times_power_of_ten(std::string_view(g).substr(0, e), std::atoi(g.c_str() + e + 1));
}

std::optional<double> whole_number_text(std::string_view text) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
    const auto lead = leading_number(text);
    if (!lead || !lead->rest.empty()) return std::nullopt;
    return std::strtod(std::string(lead->number).c_str(), nullptr);
}

std::optional<std::vector<double>> number_list_text(std::string_view text) {
    std::string t(text);
    for (std::size_t at = t.find("\u2212"); at != std::string::npos; at = t.find("\u2212", at)) t.replace(at, 3, "-");
    const auto trim = [](std::string_view v) {
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
        return v;
    };
    std::string_view items = trim(t);
    if (items.size() >= 2 && items.front() == '[' && items.back() == ']') items = items.substr(1, items.size() - 2);
    std::vector<double> out;
    for (std::size_t at = 0; at <= items.size();) {
        const std::size_t comma = std::min(items.find(',', at), items.size());
        const std::optional<double> x = whole_number_text(trim(items.substr(at, comma - at)));
        if (!x) return std::nullopt;
        out.push_back(*x);
        at = comma + 1;
    }
    return out;
}

std::optional<LeadingNumber> leading_number(std::string_view text) {
    const std::string s(text);  // strtod reads up to a NUL
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || !std::isfinite(x)) return std::nullopt;
    const auto n = static_cast<std::size_t>(end - s.c_str());
    // Decimal only, as on the command line: strtod also reads hexadecimal
    // ("0x10" is 16, "0x1p-1" is 0.5), which no lesson means.
    if (text.substr(0, n).find_first_of("xX") != std::string_view::npos) return std::nullopt;
    return LeadingNumber{text.substr(0, n), text.substr(n)};
}

}  // namespace sixstep
