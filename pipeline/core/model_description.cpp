#include "pipeline/core/model_description.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"
#include "pipeline/core/text.h"
#include "pipeline/core/trace.h"
#include "pipeline/core/trace_keys.h"

namespace sixstep {

std::string_view value_type_name(ValueType t) {
    switch (t) {
        case ValueType::number: return "number";
        case ValueType::text: return "text";
        case ValueType::numbers: return "numbers";
    }
    return "";
}

std::string_view knob_type_name(KnobType t) {
    switch (t) {
        case KnobType::number: return "number";
        case KnobType::text: return "text";
        case KnobType::boolean: return "bool";
        case KnobType::choice: return "choice";
    }
    return "";
}

// ---- knobs ------------------------------------------------------------------

namespace {

std::string num(double x) { return format_value(Value{x}); }


// "at least 0 and below 1", "from 0 to 100", "above 0 and at most 1", "at least 1".
std::string range_words(const Knob& k) {
    const bool lo = std::isfinite(k.min), hi = std::isfinite(k.max);
    if (lo && hi && !k.min_exclusive && !k.max_exclusive) return fmt::format("from {} to {}", num(k.min), num(k.max));
    std::string s;
    if (lo) s = fmt::format("{} {}", k.min_exclusive ? "above" : "at least", num(k.min));
    if (hi) s += fmt::format("{}{} {}", lo ? " and " : "", k.max_exclusive ? "below" : "at most", num(k.max));
    return s;
}

std::string either(const std::vector<std::string>& words) {
    if (words.size() == 2) return words[0] + " or " + words[1];
    return "one of " + join_names(words);
}

const std::vector<std::string>& default_spelling() {
    static const std::vector<std::string> s = {"false", "true"};
    return s;
}

}  // namespace

const std::string& Knob::spelled(bool on) const {
    const auto& s = choices.size() == 2 ? choices : default_spelling();
    return s[on ? 1 : 0];
}

std::string Knob::check(std::string_view value) const {
    if (optional && (value.empty() || value == "none" || value == "null" || value == "~")) return "";
    switch (type) {
        case KnobType::text: {
            std::string text(value);
            if (rule) rule(text);
            return text;
        }
        case KnobType::boolean: {
            const std::string v = ascii_lower(value);
            if (v == "true" || v == "yes" || v == "on" || v == "1" || v == spelled(true)) return spelled(true);
            if (v == "false" || v == "no" || v == "off" || v == "0" || v == spelled(false)) return spelled(false);
            throw Error(fmt::format("\"{}\" must be true or false, got \"{}\"", name, value));
        }
        case KnobType::choice:
            if (std::find(choices.begin(), choices.end(), value) != choices.end()) return std::string(value);
            throw Error(fmt::format("\"{}\" must be {}, got \"{}\"{}", name, either(choices), value,
                                    did_you_mean(value, choices)));
        case KnobType::number: {
            const std::string text(value);
            const std::optional<double> number = whole_number_text(text);
            if (!number) {
                // "100000 req/s": the number with a unit the knob has already.
                const auto lead = leading_number(text);
                const bool unit_after = lead && !lead->rest.empty() && lead->rest.front() == ' ';
                // "50%" for a share written as a fraction (dropout 0..1).
                if (lead && (lead->rest == "%" || lead->rest == "\uff05") && unit.empty() && max <= 1)
                    throw Error(fmt::format("\"{}\" must be a number, got \"{}\" \u2014 it is a fraction {}: write "
                                            "{:.9g}",
                                            name, value, range_words(*this),
                                            std::strtod(std::string(lead->number).c_str(), nullptr) / 100));
                throw Error(fmt::format("\"{}\" must be a number, got \"{}\"{}", name, value,
                                        unit_after ? fmt::format(" — write {}{}", lead->number,
                                                                 unit.empty() ? "" : fmt::format(" (in {})", unit))
                                                   : std::string()));
            }
            const double x = *number;
            const bool below = x < min || (min_exclusive && x == min);
            const bool above = x > max || (max_exclusive && x == max);
            if (whole && (x != std::floor(x) || below || above))
                throw Error(fmt::format("\"{}\" must be a whole number {}, got {}", name, range_words(*this), value));
            if (below || above) throw Error(fmt::format("\"{}\" must be {}, got {}", name, range_words(*this), value));
            return text;
        }
    }
    return std::string(value);
}

std::string Knob::range_text() const {
    switch (type) {
        case KnobType::text: return "text";
        case KnobType::boolean: return spelled(false) + " | " + spelled(true);
        case KnobType::choice: return join_names(choices, " | ");
        case KnobType::number: {
            std::string r = whole ? "whole" : "number";
            if (std::isfinite(min) || std::isfinite(max)) {
                r += ", ";
                if (std::isfinite(min)) r += num(min) + (min_exclusive ? " < " : " \u2264 ");
                r += "x";
                if (std::isfinite(max)) r += (max_exclusive ? " < " : " \u2264 ") + num(max);
            }
            return optional ? r + " | none" : r;
        }
    }
    return "";
}

// ---- the description --------------------------------------------------------

const Knob* ModelDescription::find_knob(std::string_view name) const {
    for (const auto& k : knobs)
        if (k.name == name) return &k;
    return nullptr;
}

const Knob& ModelDescription::knob(std::string_view name) const {
    if (const Knob* k = find_knob(name)) return *k;
    const auto names = knob_names();
    throw Error(fmt::format("unknown knob \"{}\" for the {} model{} (known: {})", name, kind, did_you_mean(name, names),
                            join_names(names)));
}

const Knob& ModelDescription::setting(std::string_view name) const {
    const Knob* k = find_knob(name);
    if (k && k->target == KnobTarget::setting) return *k;
    if (k) throw Error(fmt::format("\"{}\" is a request field of the {} model, not a setting: give it in the request", name, kind));
    const auto names = setting_names();
    if (names.empty()) throw Error(fmt::format("unknown setting \"{}\": the {} model has no settings", name, kind));
    throw Error(fmt::format("unknown setting \"{}\" for the {} model{} (known: {})", name, kind,
                            did_you_mean(name, names), join_names(names)));
}

const PathInfo* ModelDescription::find_path(std::string_view path) const {
    for (const auto& p : paths)
        if (p.path == path) return &p;
    return nullptr;
}

const Headline* ModelDescription::headline(Stage s) const {
    for (const auto& h : headlines)
        if (h.stage == s) return &h;
    return nullptr;
}

std::vector<std::string> ModelDescription::knob_names() const {
    std::vector<std::string> out;
    for (const auto& k : knobs) out.push_back(k.name);
    return out;
}

std::vector<std::string> ModelDescription::setting_names() const {
    std::vector<std::string> out;
    for (const auto& k : knobs)
        if (k.target == KnobTarget::setting) out.push_back(k.name);
    return out;
}

const PanelInfo* ModelDescription::find_panel(std::string_view name) const {
    for (const auto& p : panels)
        if (p.name == name) return &p;
    return nullptr;
}

bool ModelDescription::answers(std::string_view head) const {
    for (const auto& p : paths)
        if (p.path.size() > head.size() && p.path.compare(0, head.size(), head) == 0 && p.path[head.size()] == '.')
            return true;
    return false;
}

void add_common_paths(std::vector<PathInfo>& paths) {
    auto stage_path = [](Stage s, const char* key) { return std::string(stage_name(s)) + "." + key; };
    for (Stage s : all_stages) {
        paths.push_back({stage_path(s, keys::ms), ValueType::number, "ms", "wall time of the stage"});
        paths.push_back({stage_path(s, keys::warnings), ValueType::text, "",
                         "the stage's warnings joined by \"; \" (empty when none)"});
    }
    paths.push_back({stage_path(Stage::load, keys::cold), ValueType::text, "",
                     "\"yes\": this request paid the cold load; \"no\": the loaded weights were reused"});
    paths.push_back({stage_path(Stage::load, keys::weights_checksum), ValueType::text, "",
                     "checksum of every weight byte after loading (hex); absent for a model with no weights of its own"});
    paths.push_back({stage_path(Stage::respond, keys::weights_checksum), ValueType::text, "",
                     "checksum of every weight byte after answering (hex); absent likewise"});
    paths.push_back({stage_path(Stage::respond, keys::weights_unchanged), ValueType::text, "",
                     "\"yes\" when inference left every weight byte as loaded; absent likewise"});
    for (Stage s : {Stage::load, Stage::respond})
        paths.push_back({stage_path(s, keys::checksum_ms), ValueType::number, "ms",
                         "time to get the weights checksum (its own item, not part of the stage's time)"});
    paths.push_back({std::string("response.") + keys::text, ValueType::text, "", "the answer, as the caller gets it"});
    paths.push_back({std::string("model.") + keys::loaded, ValueType::text, "", "\"yes\" once the weights are in memory"});
    paths.push_back({std::string("model.") + keys::checksum, ValueType::text, "", "checksum of the loaded weights (hex)"});
}

}  // namespace sixstep
