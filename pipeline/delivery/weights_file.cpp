#include "pipeline/delivery/weights_file.h"

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
    const auto text_of = [&](const char* key) {
        const auto it = j.is_object() ? j.find(key) : j.end();
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (text_of("format") != format_tag)
        throw Error(SourceLocation{path}, std::string("not a delivery weights file (\"format\" is not \"") +
                                              format_tag + "\")");
    const auto version = j.find("version");
    if (version == j.end() || !version->is_number_integer() || *version != 1)
        throw Error(SourceLocation{path}, "unsupported weights file version (sixstep reads \"version\": 1)");
    auto number = [&](const char* key) {
        auto it = j.find(key);
        if (it == j.end() || !it->is_number())
            throw Error(SourceLocation{path}, std::string("missing or non-numeric \"") + key + "\"");
        return it->get<double>();
    };
    Params p;
    p.bias = number("bias");
    for (int i = 0; i < n_features; ++i) p.w[static_cast<size_t>(i)] = number(weight_keys[i]);
    return p;
}

}  // namespace sixstep::delivery
