// Hand-written regex splitters (see pretokenizer.h). Each works on decoded
// characters with their category, tries the regex's alternatives in order at
// the current position, and takes the first that matches, as a backtracking
// regex engine would.
#include "pipeline/llm/vocab/pretokenizer.h"

#include "pipeline/llm/vocab/unicode.h"

namespace sixstep::llm {

std::optional<PreTokenizer> pretokenizer_from_name(std::string_view name) {
    if (name == "default" || name == "gpt-2" || name == "gpt2") return PreTokenizer::GPT2;
    if (name == "llama3" || name == "llama-v3" || name == "llama-bpe") return PreTokenizer::LLAMA3;
    if (name == "qwen2") return PreTokenizer::QWEN2;
    return std::nullopt;
}

std::string_view pretokenizer_name(PreTokenizer p) {
    switch (p) {
        case PreTokenizer::GPT2: return "gpt-2";
        case PreTokenizer::LLAMA3: return "llama3";
        case PreTokenizer::QWEN2: return "qwen2";
    }
    return "?";
}

namespace {

// Character classes used by the regexes.
struct Char {
    uint32_t cp;
    uint32_t offset;
    bool letter, number, space;
    bool other() const { return !letter && !number && !space; }  // [^\s\p{L}\p{N}]
    bool newline() const { return cp == '\r' || cp == '\n'; }
};

std::vector<Char> classify(std::string_view text) {
    std::vector<Char> out;
    for (const auto& u : utf8_decode(text)) {
        Char c{u.cp, u.offset, false, false, false};
        if (u.cp != kInvalidCodepoint) {
            const auto cat = unicode_category(u.cp);
            c.letter = cat == UnicodeCategory::Letter;
            c.number = cat == UnicodeCategory::Number;
            c.space = unicode_is_whitespace(u.cp);
        }
        out.push_back(c);
    }
    return out;
}

uint32_t ascii_lower(uint32_t cp) { return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp; }

// 's|'t|'re|'ve|'m|'ll|'d at i (optionally ASCII case-insensitive): the
// match length in characters, or 0.
size_t match_contraction(const std::vector<Char>& cs, size_t i, bool ignore_case) {
    if (cs[i].cp != '\'' || i + 1 >= cs.size()) return 0;
    auto at = [&](size_t k) -> uint32_t {
        if (i + k >= cs.size()) return 0;
        return ignore_case ? ascii_lower(cs[i + k].cp) : cs[i + k].cp;
    };
    const uint32_t a = at(1), b = at(2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

template <typename Pred>
size_t run_end(const std::vector<Char>& cs, size_t i, Pred&& pred) {
    while (i < cs.size() && pred(cs[i])) ++i;
    return i;
}

// \s+(?!\S)|\s+ at a whitespace character i: the whole run at the end of the
// text; else the run minus its last character (which then prefixes the next
// word), or the single character when the run has only one.
size_t match_trailing_space(const std::vector<Char>& cs, size_t i) {
    const size_t e = run_end(cs, i, [](const Char& c) { return c.space; });
    if (e == cs.size()) return e;
    return e - i > 1 ? e - 1 : i + 1;
}

// GPT-2:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t next_gpt2(const std::vector<Char>& cs, size_t i) {
    if (size_t n = match_contraction(cs, i, false)) return i + n;
    const size_t s = (cs[i].cp == ' ' && i + 1 < cs.size()) ? i + 1 : i;  // the optional leading space
    if (cs[s].letter) return run_end(cs, s, [](const Char& c) { return c.letter; });
    if (cs[s].number) return run_end(cs, s, [](const Char& c) { return c.number; });
    if (cs[s].other()) return run_end(cs, s, [](const Char& c) { return c.other(); });
    return match_trailing_space(cs, i);  // cs[i] is whitespace here
}

// Llama 3 (digits: max_digits = 3) and Qwen 2 (max_digits = 1):
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t next_llama3(const std::vector<Char>& cs, size_t i, size_t max_digits) {
    if (size_t n = match_contraction(cs, i, true)) return i + n;
    const auto is_letter = [](const Char& c) { return c.letter; };
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (cs[i].letter) return run_end(cs, i, is_letter);
    if (!cs[i].newline() && !cs[i].number && i + 1 < cs.size() && cs[i + 1].letter)
        return run_end(cs, i + 1, is_letter);
    // \p{N}{1,3}
    if (cs[i].number) {
        size_t e = i;
        while (e < cs.size() && e - i < max_digits && cs[e].number) ++e;
        return e;
    }
    // ?[^\s\p{L}\p{N}]+[\r\n]*
    const size_t s = (cs[i].cp == ' ' && i + 1 < cs.size()) ? i + 1 : i;
    if (cs[s].other()) {
        const size_t e = run_end(cs, s, [](const Char& c) { return c.other(); });
        return run_end(cs, e, [](const Char& c) { return c.newline(); });
    }
    // \s*[\r\n]+ : whitespace up to and including the run's last newline
    const size_t e = run_end(cs, i, [](const Char& c) { return c.space; });
    for (size_t k = e; k > i; --k)
        if (cs[k - 1].newline()) return k;
    return match_trailing_space(cs, i);
}

}  // namespace

std::vector<std::string_view> pretokenize(std::string_view text, PreTokenizer p) {
    const std::vector<Char> cs = classify(text);
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < cs.size()) {
        size_t e = 0;
        switch (p) {
            case PreTokenizer::GPT2: e = next_gpt2(cs, i); break;
            case PreTokenizer::LLAMA3: e = next_llama3(cs, i, 3); break;
            case PreTokenizer::QWEN2: e = next_llama3(cs, i, 1); break;
        }
        if (e <= i) e = i + 1;  // cannot happen (every character matches something); never loop forever
        const size_t begin = cs[i].offset;
        const size_t end = e < cs.size() ? cs[e].offset : text.size();
        words.push_back(text.substr(begin, end - begin));
        i = e;
    }
    return words;
}

}  // namespace sixstep::llm
