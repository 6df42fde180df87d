#include "app/ui/format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "app/ui/i18n.h"
#include "pipeline/core/text.h"

namespace sixstep::ui {

namespace {
std::string real_minus(std::string s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        const bool minus = s[i] == '-' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '[' || s[i - 1] == '(');
        out += minus ? std::string("\u2212") : std::string(1, s[i]);
    }
    return out;
}
}  // namespace

namespace {
// x as format_value writes it, but never with a computer's exponent
// ("−2.09e-06"): a power of ten instead (sci_text).
std::string number_text(double x, int precision) {
    std::string s = real_minus(format_value(Value{x}, precision));
    if (s.find('e') != std::string::npos && std::isfinite(x)) return sci_text(x, precision);
    return s;
}
}  // namespace

std::string pretty_number(double x, int precision) {
    if (std::fabs(x) < 5e-13) x = 0;
    return number_text(x, precision);
}

std::string pretty_value(const Value& v, int precision) {
    if (std::holds_alternative<std::string>(v)) return tr_value(std::get<std::string>(v));  // "yes" → "是"
    if (const auto* xs = std::get_if<std::vector<double>>(&v)) {
        std::string out = "[";
        for (std::size_t i = 0; i < xs->size(); ++i) out += (i ? ", " : "") + number_text((*xs)[i], precision);
        return out + "]";
    }
    return number_text(std::get<double>(v), precision);
}

namespace {
bool chinese() { return frame_language() == "zh"; }

// x in 万 or 亿 with three significant digits: "100万", "1.23万", "2.5亿".
std::string wan_text(double x) {
    const double a = std::fabs(x);
    if (a >= 1e8) return pretty_number(x / 1e8, 3) + "\u4ebf";
    return pretty_number(x / 1e4, 3) + "\u4e07";
}
}  // namespace

std::string sci_text(double x, int digits) {
    const double a = std::fabs(x);
    if (!std::isfinite(x) || a == 0 || (a >= 1e-4 && a < 1e6)) return pretty_number(x, digits);
    return real_minus(readable_number(x, digits));
}

std::string count_text(double x) {
    if (!std::isfinite(x) || std::fabs(x) < 1e4 || std::fabs(x) >= 1e15) return pretty_number(x);
    if (chinese()) return wan_text(x);
    if (x != std::round(x)) return pretty_number(x);
    std::string digits = fmt::format("{:.0f}", std::fabs(x)), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (x < 0 ? "\u2212" : "") + out;
}

std::string short_count_text(double x) {
    const double a = std::fabs(x);
    if (chinese()) return a >= 1e4 && std::isfinite(x) ? wan_text(x) : pretty_number(x, 3);
    if (a >= 1e6) return pretty_number(x / 1e6, 3) + "M";
    if (a >= 1e3) return pretty_number(x / 1e3, 3) + "k";
    return pretty_number(x, 3);
}

std::string time_text(double x) {
    if (std::fabs(x) >= 100 || x == std::round(x)) return pretty_number(std::round(x));
    return pretty_number(x, 3);
}

std::string ms_text(double ms) { return time_text(ms) + " ms"; }

namespace {
bool is_time_unit(const std::string& unit) { return unit == "ms" || unit == "s" || unit == "\u00b5s" || unit == "us"; }

// The unit for one of a counted thing: "1 token", not "1 tokens". Chinese
// does not inflect, and its plural entries carry the measure word
// ("tokens" → "个词元"): "1 个词元", not "1 词元".
std::string unit_for(const Value& v, const std::string& unit) {
    if (chinese()) return unit;
    static const std::pair<const char*, const char*> nouns[] = {
        {"tokens", "token"}, {"positions", "position"}, {"steps", "step"}, {"requests", "request"}};
    const double* x = std::get_if<double>(&v);
    if (!x || *x != 1) return unit;
    for (const auto& [many, one] : nouns)
        if (unit == many) return one;
    return unit;
}
}  // namespace

std::string field_text(const Field& f, int precision) {
    const double* x = std::get_if<double>(&f.value);
    std::string s = x && is_time_unit(f.unit) ? time_text(*x) : pretty_value(f.value, precision);
    if (!f.unit.empty()) s += " " + tr_value(unit_for(f.value, f.unit));
    return s;
}

std::string field_label(const Field& f) { return tr(f.label.empty() ? f.key : f.label); }

std::string normalize_name(std::string s) {
    if (s.rfind("n_", 0) == 0 || s == "head_dim") return s;
    std::replace(s.begin(), s.end(), '_', ' ');
    return s;
}

namespace {

// find(key) → the field or null; first: what to show without a headline.
template <typename Find>
std::string headline_of(const Headline* h, Find find, const Field* first) {
    std::string out;
    if (h)
        for (const HeadlineField& hf : h->fields) {
            const Field* f = find(hf.key);
            if (!f) continue;
            std::string piece = field_text(*f, hf.digits);
            if (hf.quoted) piece = "\u201c" + pretty_value(f->value, hf.digits) + "\u201d";
            if (!hf.suffix.empty() && f->unit.empty() && std::holds_alternative<double>(f->value)) piece += hf.suffix;
            out += (out.empty() ? "" : h->separator) + piece;
        }
    if (out.empty() && first) out = field_text(*first);
    return out;
}

}  // namespace

std::string response_text(const Response& r) { return r.engine_words ? tr(r.text) : r.text; }

std::string headline_text(const TraceEvent& ev, const ModelDescription* model) {
    const Headline* h = model ? model->headline(ev.stage) : nullptr;
    return headline_of(h, [&](const std::string& key) { return ev.find(key); },
                       ev.outputs.empty() ? nullptr : &ev.outputs.front());
}

std::string headline_label(const TraceEvent& ev, const ModelDescription* model) {
    const Headline* h = model ? model->headline(ev.stage) : nullptr;
    if (!h) return "";
    const HeadlineField* only = nullptr;
    for (const HeadlineField& hf : h->fields)
        if (ev.find(hf.key)) {
            if (only) return "";
            only = &hf;
        }
    return only && !only->caption.empty() ? tr(only->caption) : "";
}

std::string headline_text(const std::vector<Field>& fields, const Headline* headline) {
    auto find = [&](const std::string& key) -> const Field* {
        for (const auto& f : fields)
            if (f.key == key) return &f;
        return nullptr;
    };
    return headline_of(headline, find, fields.empty() ? nullptr : &fields.front());
}

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
            if (!(prev >= 0x80 && next >= 0x80)) out += ' ';
        }
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

namespace {
size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1; }
// Chinese, Japanese and Korean characters (and their full-width punctuation)
// may break anywhere; other multi-byte characters are symbols that keep to
// their neighbours like letters do ("−2", "→ 3", "≥ 85").
bool wide(std::string_view ch) {
    if (ch.size() < 3) return false;
    const auto b = [&](size_t i) { return static_cast<unsigned char>(ch[i]) & 0x3Fu; };
    const unsigned cp = ch.size() == 3 ? ((static_cast<unsigned char>(ch[0]) & 0x0Fu) << 12) | (b(1) << 6) | b(2)
                                       : 0x20000;  // four bytes: the supplementary ideographs and beyond
    return (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFFEF) || cp >= 0x20000;
}
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
// A relation starting at `rest` ("≤ 0.91"): after a one- or two-character
// word (a symbol: "ρ ≤ 0.91") the space before it does not break either.
bool starts_relation(std::string_view rest) {
    for (std::string_view r : {"≤", "≥", "≈", "<", ">", "="})
        if (rest.substr(0, r.size()) == r) return true;
    return false;
}
}  // namespace

std::vector<std::string> wrap_lines(ImFont* font, float size, std::string_view text, float width) {
    std::vector<std::string> lines;
    auto w = [&](std::string_view s) { return font->CalcTextSizeA(size, 1e9f, 0, s.data(), s.data() + s.size()).x; };
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t nl = text.find('\n', pos);
        std::string_view para = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        // Break one paragraph into lines. The width grows a character at a
        // time (measuring every prefix anew took seconds on a long answer).
        while (!para.empty()) {
            size_t fit = 0, last_break = 0;  // bytes that fit; last good break point
            float line_w = 0;
            std::string_view prev;
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
                                         !(word_chars <= 2 && starts_relation(para.substr(i + 1)));
                word_chars = ch == " " || wide(ch) ? 0 : word_chars + 1;  // Chinese words are not spaced
                // "词元/秒" whole: nor between the two characters before a "/".
                const bool before_slash = para.substr(i + n, 1) == "/";
                if (i > 0 && (space_break || ((wide(ch) || wide(prev)) && !no_line_start(ch) && !no_line_end(prev) &&
                                              prev != " " && !before_slash)))
                    last_break = i;
                line_w += w(ch);
                if (line_w > width && fit > 0) break;
                prev = ch;
                i += n;
                fit = i;
            }
            size_t cut = fit;
            if (fit < para.size() && last_break > 0) cut = last_break;
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

void text_wrapped(std::string_view text) {
    for (const std::string& l : wrap_lines(ImGui::GetFont(), ImGui::GetFontSize(), text, ImGui::GetContentRegionAvail().x))
        ImGui::TextUnformatted(l.empty() ? " " : l.c_str());
}

float text_wrapped_height(std::string_view text, float width) {
    const auto n = static_cast<float>(wrap_lines(ImGui::GetFont(), ImGui::GetFontSize(), text, width).size());
    return n > 0 ? n * ImGui::GetTextLineHeightWithSpacing() - ImGui::GetStyle().ItemSpacing.y : 0.0f;
}

std::string fit_text(ImFont* font, float size, std::string_view text, float max_width) {
    auto width = [&](std::string_view s) { return font->CalcTextSizeA(size, 1e9f, 0, s.data(), s.data() + s.size()).x; };
    if (width(text) <= max_width) return std::string(text);
    const std::string ell = "\u2026";
    // The longest prefix (cut at a UTF-8 boundary) that fits with the
    // ellipsis. A prefix is never narrower than a shorter one, so a binary
    // search finds it: trying one character less at a time measured the text
    // once per character (a 1 MB prompt held the window for minutes).
    std::vector<size_t> cuts{0};  // where a character starts
    for (size_t i = 1; i < text.size(); ++i)
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) cuts.push_back(i);
    auto fits = [&](size_t k) { return width(std::string(text.substr(0, cuts[k])) + ell) <= max_width; };
    size_t lo = 0, hi = cuts.size();  // cuts[lo] fits (the empty prefix is taken to), cuts[hi..] do not
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (fits(mid)) lo = mid;
        else hi = mid;
    }
    return std::string(text.substr(0, cuts[lo])) + ell;
}

}  // namespace sixstep::ui
