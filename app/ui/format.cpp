#include "app/ui/format.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "app/core/line_breaks.h"
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
    if (const auto* xs = std::get_if<std::vector<double>>(&v))
        return list_text(*xs, [&](double x) { return number_text(x, precision); });
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

std::string shown_text(double x, int digits) { return real_minus(shown_number(x, digits)); }

std::string sci_text(double x, int digits) {
    const double a = std::fabs(x);
    if (!std::isfinite(x) || a == 0 || (a >= 1e-4 && a < 1e6)) return pretty_number(x, digits);
    return real_minus(readable_number(x, digits));
}

std::string decimal_text(double x, int digits) {
    const double a = std::fabs(x);
    if (!std::isfinite(x) || a == 0 || a < 1e-9 || a >= 1e6) return sci_text(x, digits);
    // Rounding may carry into the next power (0.0995 → 0.10): count the
    // decimals from the rounded value.
    const double rounded = std::stod(fmt::format("{:.{}g}", a, std::max(digits, 1)));
    const int decimals = std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(rounded))));
    return real_minus(fmt::format("{:.{}f}", x, decimals));
}

std::pair<std::string, std::string> compared_text(double a, double b) {
    if (a == std::round(a) && b == std::round(b)) return {pretty_number(a, 3), pretty_number(b, 3)};
    return {decimal_text(a, 3), decimal_text(b, 3)};
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
    const double* x = std::get_if<double>(&v);
    if (chinese() || !x) return unit;
    return std::string(unit_for_count(*x, unit));
}
}  // namespace

std::string field_text(const Field& f, int precision) {
    const double* x = std::get_if<double>(&f.value);
    // A time below the microsecond the stages print theirs to reads "< 0.001 ms",
    // as in the terminal (report.cpp), not 2×10⁻⁵ ms.
    const bool short_time = f.unit == "ms" || f.unit == "\u00b5s";
    std::string s = x && short_time && *x > 0 && *x < 1e-3 ? std::string("< 0.001")
                    : x && is_time_unit(f.unit)             ? time_text(*x)
                                                            : pretty_value(f.value, precision);
    // "100%" as the lessons and the labs write a share; "11 min", "3.9 ms".
    if (!f.unit.empty()) s += (f.unit == "%" ? "" : " ") + tr_value(unit_for(f.value, f.unit));
    return s;
}

std::string field_label(const Field& f) { return tr(f.label.empty() ? f.key : f.label); }

namespace {
bool verbatim(const Field& f, Stage stage, const ModelDescription* model) {
    if (!model || !std::holds_alternative<std::string>(f.value)) return false;
    const PathInfo* p = model->find_path(std::string(stage_name(stage)) + "." + f.key);
    return p && p->verbatim;
}
}  // namespace

std::string field_text(const Field& f, Stage stage, const ModelDescription* model, int precision) {
    if (verbatim(f, stage, model)) return std::get<std::string>(f.value);
    return field_text(f, precision);
}

namespace {

// find(key) → the field or null; first: what to show without a headline.
// A quoted field (a token piece) and the model's own text as they are.
template <typename Find>
std::string headline_of(const Headline* h, Find find, const Field* first, Stage stage, const ModelDescription* model) {
    std::string out;
    if (h)
        for (const HeadlineField& hf : h->fields) {
            const Field* f = find(hf.key);
            if (!f) continue;
            std::string piece = field_text(*f, stage, model, hf.digits);
            if (hf.quoted)
                piece = "\u201c" +
                        (std::holds_alternative<std::string>(f->value) ? std::get<std::string>(f->value)
                                                                       : pretty_value(f->value, hf.digits)) +
                        "\u201d";
            if (!hf.suffix.empty() && f->unit.empty() && std::holds_alternative<double>(f->value)) piece += hf.suffix;
            std::string prefix = hf.prefix;
            // A share just under 1 is not certainty: "p > 0.99", not "p = 1"
            // (0.99999 at two digits).
            if (const double* x = std::get_if<double>(&f->value);
                x && *x > 0 && *x < 1 && f->unit.empty() && hf.suffix.empty() && piece == "1") {
                piece = "0." + std::string(static_cast<std::size_t>(std::max(hf.digits, 1)), '9');
                if (prefix.size() >= 2 && prefix.compare(prefix.size() - 2, 2, "= ") == 0) prefix.replace(prefix.size() - 2, 1, ">");
                else piece = "> " + piece;
            }
            out += (out.empty() ? "" : h->separator) + prefix + piece;
            if (h->first_only) break;
        }
    if (out.empty() && first) out = field_text(*first, stage, model);
    return out;
}

}  // namespace

std::string response_text(const Response& r) { return r.engine_words ? tr(r.text) : r.text; }

std::string headline_text(const TraceEvent& ev, const ModelDescription* model) {
    const Headline* h = model ? model->headline(ev.stage) : nullptr;
    return headline_of(h, [&](const std::string& key) { return ev.find(key); },
                       ev.outputs.empty() ? nullptr : &ev.outputs.front(), ev.stage, model);
}

std::string headline_label(const TraceEvent& ev, const ModelDescription* model) {
    const Headline* h = model ? model->headline(ev.stage) : nullptr;
    if (!h) return "";
    // Each shown value's caption, in the values' order ("p90 growth ·
    // measured vs predicted" under "3.24 · 5.24"); none when one lacks it.
    std::string out;
    for (const HeadlineField& hf : h->fields)
        if (ev.find(hf.key)) {
            if (hf.caption.empty()) return "";
            out += (out.empty() ? "" : h->separator) + tr(hf.caption);
            if (h->first_only) break;
        }
    return out;
}

std::string headline_text(const std::vector<Field>& fields, const Headline* headline, Stage stage,
                          const ModelDescription* model) {
    auto find = [&](const std::string& key) -> const Field* {
        for (const auto& f : fields)
            if (f.key == key) return &f;
        return nullptr;
    };
    return headline_of(headline, find, fields.empty() ? nullptr : &fields.front(), stage, model);
}

std::vector<std::string> wrap_lines(ImFont* font, float size, std::string_view text, float width) {
    return app::break_lines(text, width, [&](std::string_view ch) {
        return font->CalcTextSizeA(size, 1e9f, 0, ch.data(), ch.data() + ch.size()).x;
    });
}

std::vector<std::string> balanced_lines(ImFont* font, float size, std::string_view text, float width) {
    const auto w = [&](std::string_view t) { return font->CalcTextSizeA(size, 1e9f, 0, t.data(), t.data() + t.size()).x; };
    // A width that cuts a line where no break is allowed (inside a word, or
    // "Temperature 1,") counts as too narrow.
    bool cut = false;
    const auto wrap = [&](float at) { return app::break_lines(text, at, w, &cut); };
    std::vector<std::string> lines = wrap(width);
    // A title of a few lines: a lesson's 1 MB title is wrapped once, not
    // bisected on every frame.
    if (lines.size() < 2 || lines.size() > 4 || cut) return lines;
    // Two lines of Chinese: at a punctuation mark or a space where one fits,
    // the most even such split, rather than inside a word ("注⏎意力").
    if (lines.size() == 2) {
        bool chinese = false;
        for (std::size_t i = 0; i + 2 < text.size() && !chinese; ++i)
            chinese = static_cast<unsigned char>(text[i]) >= 0xE0 && app::wide_char(text.substr(i, 3));
        std::string_view best_a, best_b;
        float best = 1e30f;
        // Punctuation first; a space (between Chinese and a Latin word) only
        // where no mark gives two lines that fit.
        for (const std::string_view mark : {"\uff1a", "\uff0c", "\u3001", "\u2014\u2014", " "}) {
            if (!chinese || (mark == " " && best < 1e30f)) break;
            for (std::size_t at = text.find(mark); at != std::string_view::npos; at = text.find(mark, at + 1)) {
                const std::size_t end = mark == " " ? at : at + mark.size();  // the mark ends the first line; a space goes
                const std::string_view a = text.substr(0, end), b = text.substr(at + mark.size());
                if (a.empty() || b.empty()) continue;
                const float widest = std::max(w(a), w(b));
                if (widest <= width && widest < best) best = widest, best_a = a, best_b = b;
            }
        }
        if (best < 1e30f) return {std::string(best_a), std::string(best_b)};
    }
    // Fewer lines never come from a narrower width, so the line count is
    // monotone in the width: bisect to a pixel.
    float lo = width / static_cast<float>(lines.size()) - 1, hi = width;  // lo: too narrow; hi: as many, whole
    while (hi - lo > 1) {
        const float mid = (lo + hi) / 2;
        if (wrap(mid).size() <= lines.size() && !cut) hi = mid;
        else lo = mid;
    }
    return wrap(hi);
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

std::string fit_clauses(ImFont* font, float size, std::string_view text, float max_width) {
    const std::string cut = fit_text(font, size, text, max_width);
    if (cut == text) return cut;
    // Where a clause ends, within what fit_text kept (a prefix is never
    // narrower than a shorter one, so no later end can fit): at ", ", "; ",
    // ": " in Latin text, followed by " …"; at the full-width comma,
    // semicolon or colon in Chinese, followed by "…". The last end whose
    // clauses fit wins.
    const size_t kept = cut.size() - std::string_view("\u2026").size();
    // An end at `kept` may have its punctuation beyond it.
    const std::string_view window = text.substr(0, kept + 3);
    std::vector<std::pair<size_t, const char*>> ends;
    for (const std::string_view e : {", ", "; ", ": "})
        for (size_t at = window.find(e); at != std::string_view::npos && at <= kept; at = window.find(e, at + 1)) ends.push_back({at, " \u2026"});
    for (const std::string_view e : {"\uff0c", "\uff1b", "\uff1a"})
        for (size_t at = window.find(e); at != std::string_view::npos && at <= kept; at = window.find(e, at + 1)) ends.push_back({at, "\u2026"});
    std::sort(ends.rbegin(), ends.rend());
    for (const auto& [at, ell] : ends) {
        if (at == 0) continue;
        const std::string clauses = std::string(text.substr(0, at)) + ell;
        if (font->CalcTextSizeA(size, 1e9f, 0, clauses.c_str()).x <= max_width) return clauses;
    }
    return cut;
}

}  // namespace sixstep::ui
