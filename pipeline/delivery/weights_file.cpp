#include "pipeline/delivery/weights_file.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pipeline/core/error.h"
#include "pipeline/core/file.h"

namespace sixstep::delivery {

namespace {
constexpr const char* format_tag = "sixstep-delivery-weights";
constexpr const char* weight_keys[] = {"w_distance", "w_congestion", "w_express_lane"};
}  // namespace

void save_weights(const std::string& path, const Params& p, const WeightsInfo& info) {
    nlohmann::ordered_json j;
    j["format"] = format_tag;
    j["version"] = 1;
    j["bias"] = p.bias;
    for (int i = 0; i < n_features; ++i) j[weight_keys[i]] = p.w[static_cast<size_t>(i)];
    j["trained_steps"] = info.trained_steps;
    j["final_loss"] = info.final_loss;
    // Complete or not at all: an interrupted save leaves no half-written file.
    AtomicFile f(path);
    f.write(j.dump(2) + "\n");
    f.commit();
}

Params load_weights(const std::string& path) {
    const std::string text = read_regular_file(path, "the weights file", 1u << 20);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // The library's message after its own prefix ("[json.exception.parse_error.101] parse
        // error at line 1, column 2: "), at the line and column of the byte it stopped at.
        const std::string what = e.what();
        const std::size_t reason = what.find(": ", what.find("parse error"));
        SourceLocation at{path, 1, 1};
        for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i)
            if (text[i] == '\n') ++at.line, at.column = 1;
            else ++at.column;
        throw Error(at, "not valid JSON: " + (reason == std::string::npos ? what : what.substr(reason + 2)));
    } catch (const nlohmann::json::exception&) {
        // parse() throws out_of_range for a number no double holds ("1e999").
        throw Error(SourceLocation{path}, "not a weights file: a number in it is too large for a double");
    }
    // Everything wrong at once, then what a whole file looks like: a file
    // written by hand (a lesson's weights_file) should take one round.
    std::vector<std::string> problems;
    const auto field = [&](const char* key) {
        return j.is_object() && j.contains(key) ? &j.at(key) : static_cast<const nlohmann::json*>(nullptr);
    };
    const nlohmann::json* format = field("format");
    if (!format || !format->is_string() || *format != format_tag)
        problems.push_back(std::string("\"format\" is not \"") + format_tag + "\"");
    const nlohmann::json* version = field("version");
    if (!version || !version->is_number_integer() || *version != 1)
        problems.push_back("\"version\" is not 1 (the version sixstep reads)");
    Params p;
    const auto number = [&](const char* key, double& out) {
        const nlohmann::json* v = field(key);
        if (v && v->is_number()) out = v->get<double>();
        else problems.push_back(std::string("\"") + key + (v ? "\" is not a number" : "\" is missing"));
    };
    number("bias", p.bias);
    for (int i = 0; i < n_features; ++i) number(weight_keys[i], p.w[static_cast<size_t>(i)]);
    if (!problems.empty()) {
        std::string list;
        for (const std::string& why : problems) list += (list.empty() ? "" : "; ") + why;
        throw Error(SourceLocation{path},
                    fmt::format("not a delivery weights file: {} — a whole one reads {{\"format\": \"{}\", "
                                "\"version\": 1, \"bias\": 5, \"w_distance\": 2, \"w_congestion\": 10, "
                                "\"w_express_lane\": -2}} (minutes, minutes per km, per unit of congestion, "
                                "for the express lane)",
                                list, format_tag));
    }
    return p;
}

}  // namespace sixstep::delivery
