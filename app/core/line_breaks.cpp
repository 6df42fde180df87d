#include "app/core/line_breaks.h"

#include <algorithm>
#include <cctype>

namespace sixstep::app {

namespace {
size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1; }
}  // namespace

namespace {
bool ends_full_width_punctuation(std::string_view s) {
    for (std::string_view p : {"。", "，", "、", "；", "：", "！", "？", "）", "」", "”"})
        if (s.size() >= p.size() && s.substr(s.size() - p.size()) == p) return true;
    return false;
}
}  // namespace

std::string reflow(std::string_view text) {
    auto list_item = [](std::string_view rest) {
        size_t i = 0;
        while (i < rest.size() && rest[i] == ' ') ++i;
        rest = rest.substr(i);
        if (rest.size() >= 2 && (rest[0] == '-' || rest[0] == '*') && rest[1] == ' ') return true;
        size_t d = 0;
        while (d < rest.size() && rest[d] >= '0' && rest[d] <= '9') ++d;
        return d > 0 && d + 1 < rest.size() && rest[d] == '.' && rest[d + 1] == ' ';
    };
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '\n') {
            out += c;
            continue;
        }
        const bool blank_next = i + 1 < text.size() && text[i + 1] == '\n';
        const bool blank_prev = i > 0 && text[i - 1] == '\n';
        if (blank_next || blank_prev || list_item(text.substr(i + 1))) {
            out += '\n';
        } else if (i + 1 < text.size()) {
            // Chinese needs no space where a line was wrapped.
            const unsigned char prev = out.empty() ? 0 : static_cast<unsigned char>(out.back());
            const unsigned char next = static_cast<unsigned char>(text[i + 1]);
            // Nor after full-width punctuation, which carries its own space
            // ("模式。 dropout", "； TPOT" showed a second one).
            if (!(prev >= 0x80 && next >= 0x80) && !ends_full_width_punctuation(out)) out += ' ';
        }
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

// Chinese, Japanese and Korean characters (and their full-width punctuation)
// may break anywhere; other multi-byte characters are symbols that keep to
// their neighbours like letters do ("−2", "→ 3", "≥ 85").
bool wide_char(std::string_view ch) {
    if (ch.size() < 3) return false;
    const auto b = [&](size_t i) { return static_cast<unsigned char>(ch[i]) & 0x3Fu; };
    const unsigned cp = ch.size() == 3 ? ((static_cast<unsigned char>(ch[0]) & 0x0Fu) << 12) | (b(1) << 6) | b(2)
                                       : 0x20000;  // four bytes: the supplementary ideographs and beyond
    return (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFFEF) || cp >= 0x20000;
}

namespace {
// A relation keeps its number on its line: no break in the space after it.
bool binds_next(std::string_view ch) {
    return ch == "≤" || ch == "≥" || ch == "≈" || ch == "<" || ch == ">" || ch == "=";
}
bool no_line_start(std::string_view ch) {
    static constexpr std::string_view closers[] = {"。", "，", "、", "；", "：", "！", "？", "）", "」", "”", "’", "》", "…"};
    for (auto c : closers)
        if (ch == c) return true;
    // "/" joins a unit's halves: "词元/秒" stays whole, as "tok/s" does.
    return ch == "." || ch == "," || ch == ";" || ch == ":" || ch == "!" || ch == "?" || ch == ")" || ch == "/";
}
// An opening bracket or quote keeps the character after it on its line.
bool no_line_end(std::string_view ch) {
    static constexpr std::string_view openers[] = {"（", "「", "“", "‘", "《"};
    for (auto c : openers)
        if (ch == c) return true;
    return ch == "(" || ch == "/";
}
// A quote that opens (at the start, after a space, an opener or a wide
// character): a token's leading space inside it (" mat") is no place to
// break, which left 'p("' at a line's end and 'mat")' under it.
bool opening_quote(std::string_view ch, std::string_view before) {
    if (ch != "\"" && ch != "\u201c" && ch != "'") return false;
    return before.empty() || before == " " || no_line_end(before) || wide_char(before);
}
// A relation starting at `rest` ("≤ 0.91"): after a one- or two-character
// word (a symbol: "ρ ≤ 0.91") the space before it does not break either.
bool starts_relation(std::string_view rest) {
    for (std::string_view r : {"≤", "≥", "≈", "<", ">", "="})
        if (rest.substr(0, r.size()) == r) return true;
    return false;
}
// A unit starting at `rest`, a word of its own ("ms)", "km,"; not "more"):
// after a number, the space before it does not break ("0.197⏎ms" read as
// a number without its unit, and a line that begins with one).
bool starts_unit(std::string_view rest) {
    for (std::string_view u : {"ms", "s", "µs", "min", "km", "B", "KiB", "MiB", "GiB", "kB", "MB", "GB", "TB",
                               "tok/s", "req/s", "tokens", "FLOP"}) {
        if (rest.substr(0, u.size()) != u) continue;
        const std::string_view after = rest.substr(u.size(), 1);
        if (after.empty() || !(std::isalnum(static_cast<unsigned char>(after[0])) || after == "_" || after == "/"))
            return true;
    }
    return false;
}
bool digit(std::string_view ch) { return ch.size() == 1 && ch[0] >= '0' && ch[0] <= '9'; }
// A number of one or two digits as a word of its own ("1,", "3", "06"): after
// a word it stays with it ("Temperature⏎1, nothing cut"; "Step 3", "batch 8").
bool starts_short_number(std::string_view rest) {
    size_t n = 0;
    while (n < rest.size() && n < 3 && std::isdigit(static_cast<unsigned char>(rest[n]))) ++n;
    if (n == 0 || n > 2) return false;
    if (n < rest.size() && std::string_view(",.:;)").find(rest[n]) != std::string_view::npos) return n + 1 == rest.size() || rest[n + 1] == ' ';
    // A quantity ("3 km") is no label: "it takes⏎3 km" breaks as before.
    return n == rest.size() || (rest[n] == ' ' && !starts_unit(rest.substr(n + 1)));
}
bool letter(std::string_view ch) { return ch.size() == 1 && std::isalpha(static_cast<unsigned char>(ch[0])); }
}  // namespace

std::vector<std::string> break_lines(std::string_view text, float width,
                                     const std::function<float(std::string_view)>& w, bool* forced) {
    if (forced) *forced = false;
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t nl = text.find('\n', pos);
        std::string_view para = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        // Break one paragraph into lines. The width grows a character at a
        // time (measuring every prefix anew took seconds on a long answer).
        while (!para.empty()) {
            size_t fit = 0, last_break = 0;  // bytes that fit; last good break point
            float line_w = 0;
            std::string_view prev, before_prev;
            int word_chars = 0;  // characters since the last space or wide character
            for (size_t i = 0; i < para.size();) {
                const size_t n = std::min(utf8_len(static_cast<unsigned char>(para[i])), para.size() - i);
                const std::string_view ch = para.substr(i, n);
                // A break is allowed before a space, or between two characters
                // where either is wide, unless the next one is a closer or the
                // one before an opener. Digits, letters and their points never
                // part ("0.260" stays whole). The text before this character
                // fits, so a break here is good even when the character does
                // not (a space past the edge).
                const bool space_break = ch == " " && !binds_next(prev) && para.substr(i + 1, 1) != "%" &&  // "≥ 85 %"
                                         !(word_chars <= 2 && starts_relation(para.substr(i + 1))) &&
                                         !(digit(prev) && starts_unit(para.substr(i + 1))) &&
                                         !(letter(prev) && starts_short_number(para.substr(i + 1))) &&
                                         !opening_quote(prev, before_prev);
                word_chars = ch == " " || wide_char(ch) ? 0 : word_chars + 1;  // Chinese words are not spaced
                // "词元/秒" whole: nor between the two characters before a "/".
                const bool before_slash = para.substr(i + n, 1) == "/";
                if (i > 0 && (space_break || ((wide_char(ch) || wide_char(prev)) && !no_line_start(ch) && !no_line_end(prev) &&
                                              prev != " " && !before_slash)))
                    last_break = i;
                line_w += w(ch);
                if (line_w > width && fit > 0) break;
                before_prev = prev;
                prev = ch;
                i += n;
                fit = i;
            }
            size_t cut = fit;
            if (fit < para.size() && last_break > 0) cut = last_break;
            else if (fit < para.size() && forced) *forced = true;
            std::string_view line = para.substr(0, cut);
            lines.emplace_back(line);
            para.remove_prefix(cut);
            while (!para.empty() && para.front() == ' ') para.remove_prefix(1);
        }
        if (nl == std::string_view::npos) break;
        if (text.substr(pos, nl - pos).empty()) lines.emplace_back();  // blank line: paragraph gap
        pos = nl + 1;
    }
    return lines;
}

int display_columns(std::string_view text) {
    int n = 0;
    for (size_t i = 0; i < text.size();) {
        const size_t len = std::min(utf8_len(static_cast<unsigned char>(text[i])), text.size() - i);
        n += wide_char(text.substr(i, len)) ? 2 : 1;
        i += len;
    }
    return n;
}

std::vector<std::string> break_lines_columns(std::string_view text, int columns) {
    return break_lines(text, static_cast<float>(columns),
                       [](std::string_view ch) { return static_cast<float>(display_columns(ch)); });
}

}  // namespace sixstep::app
