#include "pipeline/serving/serving_lab.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

LabFields::LabFields(const Request& r) {
    const ModelDescription& d = ServingModel::describe();
    for (const auto& [name, value] : r.fields) {
        const Knob& k = d.knob(name);  // an unknown field: "did you mean"
        values_[k.name] = k.check(value);
    }
}

std::string LabFields::text(const char* name) const {
    asked_.emplace(name);
    auto it = values_.find(name);
    return it != values_.end() ? it->second : ServingModel::describe().knob(name).default_value;
}

bool LabFields::on(const char* name) const { return text(name) == ServingModel::describe().knob(name).spelled(true); }

void check_lab_request(const Request& r) {
    const LabFields fields(r);
    TraceEvent scratch;
    lab_experiment(fields.text(keys::experiment)).make()->read(fields, scratch);
}

std::vector<double> number_list(const std::string& text, const char* name, bool ascending) {
    std::vector<double> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
        const std::string t = b == std::string::npos ? "" : item.substr(b, e - b + 1);
        if (t.empty()) throw Error(fmt::format("\"{}\" has an empty item: a value is missing (write them like 1,2,4)", name));
        const std::optional<double> number = whole_number_text(t);
        if (!number) throw Error(fmt::format("\"{}\": \"{}\" is not a number (write them like 1,2,4)", name, t));
        const double x = *number;
        if (ascending && !out.empty() && x <= out.back())
            throw Error(fmt::format("\"{}\" must ascend: {} after {}", name, format_value(Value{x}),
                                    format_value(Value{out.back()})));
        out.push_back(x);
    }
    if (out.empty()) throw Error(fmt::format("\"{}\" is empty: give at least one value", name));
    // getline leaves out an empty last item: "1,2," read as 1, 2.
    if (text[text.find_last_not_of(' ')] == ',')
        throw Error(fmt::format("\"{}\" has an empty item: a value is missing (write them like 1,2,4)", name));
    return out;
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

const std::vector<LabEntry>& lab_experiments() {
    static const std::vector<LabEntry> all = {
        {"traffic", true, declare_traffic_lab, traffic_lab_work, make_traffic_lab},
        {"batch_sweep", true, declare_batch_sweep_lab, batch_sweep_lab_work, make_batch_sweep_lab},
        {"queue", true, declare_queue_lab, queue_lab_work, make_queue_lab},
        {"quantization", true, declare_quantization_lab, quantization_lab_work, make_quantization_lab},
        {"speculative", true, declare_speculative_lab, speculative_lab_work, make_speculative_lab},
        {"cold_start", true, declare_cold_start_lab, cold_start_lab_work, make_cold_start_lab},
        {"bill", true, declare_bill_lab, bill_lab_work, make_bill_lab},
        {"waits", true, declare_waits_lab, waits_lab_work, make_waits_lab},
        {"canary", false, declare_canary_lab, canary_lab_work, make_canary_lab},
    };
    return all;
}

std::vector<std::string> lab_experiments_emitting(std::string_view path) {
    static const std::map<std::string, std::vector<std::string>, std::less<>> by_path = [] {
        std::map<std::string, std::vector<std::string>, std::less<>> m;
        for (const LabEntry& e : lab_experiments()) {
            std::vector<Knob> knobs;
            std::vector<PathInfo> paths;
            e.declare(knobs, paths);
            for (const PathInfo& p : paths) m[p.path].push_back(e.name);
        }
        return m;
    }();
    const auto it = by_path.find(path);
    return it == by_path.end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::string> lab_experiments_reading(std::string_view field) {
    static const std::map<std::string, std::vector<std::string>, std::less<>> by_field = [] {
        std::map<std::string, std::vector<std::string>, std::less<>> m;
        for (const LabEntry& e : lab_experiments()) {
            // Each reads its defaults: reading is cheap and runs nothing.
            const LabFields defaults;
            TraceEvent scratch;
            e.make()->read(defaults, scratch);
            for (const std::string& name : defaults.asked()) m[name].push_back(e.name);
        }
        return m;
    }();
    const auto it = by_field.find(field);
    return it == by_field.end() ? std::vector<std::string>{} : it->second;
}

const LabEntry* find_lab_experiment(std::string_view name) {
    for (const LabEntry& e : lab_experiments())
        if (name == e.name) return &e;
    return nullptr;
}

const LabEntry& lab_experiment(std::string_view name) {
    if (const LabEntry* e = find_lab_experiment(name)) return *e;
    throw Error(fmt::format("no serving experiment is called \"{}\"", name));
}

namespace lab {

Knob knob(const char* name, KnobType type, std::string default_value, const char* meaning) {
    Knob k;
    k.name = name;
    k.type = type;
    k.target = KnobTarget::request;
    k.default_value = std::move(default_value);
    k.meaning = meaning;
    return k;
}

Knob whole(const char* name, double lo, double hi, int default_value, const char* unit, const char* meaning) {
    Knob k = knob(name, KnobType::number, std::to_string(default_value), meaning);
    k.min = lo, k.max = hi, k.whole = true, k.unit = unit;
    return k;
}

Knob number(const char* name, double lo, double hi, double default_value, const char* unit, const char* meaning) {
    Knob k = knob(name, KnobType::number, format_value(Value{default_value}), meaning);
    k.min = lo, k.max = hi, k.unit = unit;
    return k;
}

Knob choice(const char* name, std::vector<std::string> choices, const char* meaning) {
    Knob k = knob(name, KnobType::choice, choices.front(), meaning);
    k.choices = std::move(choices);
    return k;
}

std::string path(Stage s, const char* key) { return fmt::format("{}.{}", stage_name(s), key); }

long long whole_field(const FieldLookup& field, const char* name) {
    return static_cast<long long>(std::stod(field(name)));
}

std::vector<long long> whole_numbers(const std::string& text) {
    std::vector<long long> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        char* end = nullptr;
        const double x = std::strtod(item.c_str(), &end);
        if (end != item.c_str() && std::isfinite(x) && x >= 1 && x <= 1e9) out.push_back(static_cast<long long>(x));
    }
    return out;
}

long long list_length(std::string_view text) {
    return static_cast<long long>(std::count(text.begin(), text.end(), ',')) + 1;
}

}  // namespace lab

}  // namespace sixstep::serving
