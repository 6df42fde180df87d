#include "pipeline/core/suggest.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include "pipeline/core/text.h"

namespace sixstep {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

namespace {

// Words other tools use for a name of ours, tried before spelling: "gt" is
// two edits from "not", and means "above".
std::string_view synonym_of(std::string_view word) {
    static constexpr std::pair<std::string_view, std::string_view> synonyms[] = {
        {"gt", "above"},        {"greater", "above"}, {"greater_than", "above"}, {"more_than", "above"},
        {"over", "above"},      {"lt", "below"},      {"less", "below"},         {"less_than", "below"},
        {"under", "below"},     {"eq", "equals"},     {"equal", "equals"},       {"is", "equals"},
        {"tolerance", "tol"},   {"within", "tol"},    {"includes", "contains"},  {"has", "contains"},
        {"multiplied", "times"}, {"factor", "times"}, {"add", "plus"},           {"offset", "plus"},
        // A language by another name (a locale, a country, the word itself).
        {"cn", "zh"},           {"zh-cn", "zh"},      {"zh_cn", "zh"},           {"zh-hans", "zh"},
        {"chinese", "zh"},      {"中文", "zh"},       {"汉语", "zh"},            {"简体中文", "zh"},
        {"english", "en"},      {"en-us", "en"},      {"en_us", "en"},           {"en-gb", "en"},
        {"英文", "en"},         {"英语", "en"},
        // A number type by another tool's name (PyTorch's, a short one).
        {"fp16", "f16"},        {"half", "f16"},      {"float16", "f16"},        {"fp32", "f32"},
        {"float", "f32"},       {"float32", "f32"},   {"bfloat16", "bf16"},      {"q8", "q8_0"},
        {"q4", "q4_0"},
        // A mode by its long name.
        {"training", "train"},  {"inference", "eval"}, {"evaluate", "eval"},   {"evaluation", "eval"},
    };
    const std::string lower = ascii_lower(word);
    for (const auto& [other, ours] : synonyms)
        if (lower == other) return ours;
    return {};
}

}  // namespace

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
    if (const std::string_view ours = synonym_of(word); !ours.empty())
        for (const auto& c : candidates)
            if (c == ours) return c;
    std::string best;
    std::size_t best_d = 3;  // suggest only close matches
    for (const auto& c : candidates) {
        // The distance is at least the difference in length: a megabyte
        // pasted as a word is compared with nothing, not with every name.
        const std::size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
        if (gap >= best_d) continue;
        const std::size_t d = edit_distance(word, c);
        // And not a whole word rewritten: any two-letter word is two edits
        // from "en", which is no reason to suggest it for "fr".
        if (d < best_d && d < std::max(word.size(), c.size())) best_d = d, best = c;
    }
    return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    const std::string best = closest_name(word, candidates);
    return best.empty() ? std::string() : " \u2014 did you mean \"" + best + "\"?";
}

std::string join_names(const std::vector<std::string>& names, std::string_view separator) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty()) out += separator;
        out += n;
    }
    return out;
}

}  // namespace sixstep
