// What the delivery model declares about itself: its knobs (the request's
// three features and the settings of delivery_model's Settings), every path
// its stages emit and the app answers for it, and what each stage shows large.
// tests/delivery/test_delivery_description.cpp runs the model and checks that
// it emits exactly these paths.
#include <tuple>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/stage.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/delivery/delivery_model.h"
#include "pipeline/delivery/features.h"
#include "pipeline/delivery/trace_keys.h"

namespace sixstep::delivery {

namespace {

std::string path(Stage s, const char* key) { return fmt::format("{}.{}", stage_name(s), key); }

std::vector<Knob> knobs() {
    const Settings defaults;
    auto request = [](const char* name, KnobType type, const char* meaning) {
        Knob k;
        k.name = name;
        k.type = type;
        k.target = KnobTarget::request;
        k.meaning = meaning;
        k.required = true;  // a feature the model reads: no request goes without it
        return k;
    };
    auto setting = [](const char* name, KnobType type, std::string default_value, const char* meaning) {
        Knob k;
        k.name = name;
        k.type = type;
        k.target = KnobTarget::setting;
        k.default_value = std::move(default_value);
        k.meaning = meaning;
        return k;
    };
    std::vector<Knob> out;

    // The request: one knob per feature.
    out.push_back(request(features[0].name.data(), KnobType::text,
                          "the trip's length with its unit: \"3 km\", \"3000 m\", \"1.9 mi\""));
    Knob congestion = request(features[1].name.data(), KnobType::number,
                              "traffic congestion, a fraction 0..1 (a request may also say \"50%\")");
    congestion.min = 0, congestion.max = 1;
    congestion.slider_min = 0, congestion.slider_max = 1;
    out.push_back(congestion);
    Knob express = request(features[2].name.data(), KnobType::boolean, "1 when the order may use the express lane");
    express.choices = {"0", "1"};
    out.push_back(express);

    // The settings.
    Knob normalize = setting(setting_names::normalize, KnobType::boolean, defaults.normalize ? "true" : "false",
                             "convert units to the training unit; false sends numbers as written (the "
                             "training/serving skew)");
    normalize.caution = Caution{"false", "normalization OFF", "normalization"};
    out.push_back(normalize);
    out.push_back(setting(setting_names::range_check, KnobType::boolean, defaults.range_check ? "true" : "false",
                          "warn when a value lies outside the training range"));
    Knob mode = setting(setting_names::mode, KnobType::choice, mode_name(defaults.mode),
                        "eval, or train: dropout stays on at inference (the forgotten model.eval())");
    mode.choices = {mode_name(Mode::eval), mode_name(Mode::train)};
    // Beside the radio buttons "eval" and "train", the caption says what the
    // mode does rather than repeat its name.
    mode.caution = Caution{mode_name(Mode::train), "dropout ON", "dropout off"};
    out.push_back(mode);
    Knob dropout = setting(setting_names::dropout, KnobType::number, fmt::format("{}", defaults.dropout),
                           "probability of dropping each input feature in train mode");
    dropout.min = 0, dropout.max = 1, dropout.max_exclusive = true;
    dropout.slider_min = 0, dropout.slider_max = 0.9;
    dropout.only_while_setting = setting_names::mode, dropout.only_while_value = mode_name(Mode::train);
    out.push_back(dropout);
    Knob seed = setting(setting_names::seed, KnobType::number, fmt::format("{}", defaults.seed), "dropout's random seed");
    seed.min = 0, seed.max = 2147483647, seed.whole = true;
    out.push_back(seed);
    Knob minimum = setting(setting_names::minimum_minutes, KnobType::number, "",
                           "business rule: never promise less than this (none: no rule)");
    minimum.unit = "min";
    minimum.optional = true;
    minimum.min = 0, minimum.max = 1e6;  // as infer's --minimum: 1e308 promised "1e+308 minutes"
    out.push_back(minimum);
    Knob lang = setting(setting_names::lang, KnobType::choice, defaults.lang,
                        "language of the answer (a lesson starts with its own language)");
    lang.choices = {"en", "zh"};
    out.push_back(lang);
    return out;
}

std::vector<PathInfo> paths() {
    using VT = ValueType;
    std::vector<PathInfo> p = {
        // 1 request
        {path(Stage::request, features[0].name.data()), VT::text, "", "the distance as the request wrote it: \"3000 m\""},
        {path(Stage::request, keys::distance_km), VT::number, "km", "the distance in the training unit"},
        {path(Stage::request, keys::congestion), VT::number, "", "congestion as a fraction 0..1"},
        {path(Stage::request, keys::express_lane), VT::number, "", "express lane, 0 or 1"},
        {path(Stage::request, keys::features), VT::numbers, "", "the feature vector the model sees: [km, congestion, lane]"},
        {path(Stage::request, keys::normalized), VT::text, "", "\"yes\" when units were converted, \"no\" when sent as written"},
        // 2 load
        {path(Stage::load, sixstep::keys::cold_load_ms), VT::number, "ms", "time of the cold load (only when this request paid it)"},
        {path(Stage::load, keys::file), VT::text, "", "the weights file read (only when serving from a file)"},
        {path(Stage::load, keys::bias), VT::number, "min", "b: minutes whatever the trip"},
        {path(Stage::load, keys::w_distance), VT::number, "min/km", "minutes per km"},
        {path(Stage::load, keys::w_congestion), VT::number, "min", "minutes for full congestion"},
        {path(Stage::load, keys::w_express_lane), VT::number, "min", "minutes for the express lane (negative: faster)"},
        {path(Stage::load, keys::weights), VT::numbers, "", "[b, w_distance, w_congestion, w_express_lane]"},
        // 3 forward
        {path(Stage::forward, keys::features), VT::numbers, "", "the feature vector that went in"},
        {path(Stage::forward, keys::dropout_mask), VT::numbers, "", "which inputs dropout kept (1) or dropped (0); train mode only"},
        {path(Stage::forward, keys::terms), VT::numbers, "min", "each weight × its feature"},
        {path(Stage::forward, keys::raw_output), VT::number, "", "b + Σ w·x: the model's bare number"},
        {path(Stage::forward, keys::mode), VT::text, "", "\"eval\" or \"train\""},
        // 4 output
        {path(Stage::output, keys::raw_output), VT::number, "", "the raw output: no unit, no rounding"},
        // 5 postprocess
        {path(Stage::postprocess, keys::raw_output), VT::number, "", "the raw output that went in"},
        {path(Stage::postprocess, keys::minutes), VT::number, "min", "rounded, after business rules"},
        {path(Stage::postprocess, keys::rule), VT::text, "", "the business rule applied, or \"none\""},
        {path(Stage::postprocess, sixstep::keys::text), VT::text, "", "the sentence for the customer"},
        // 6 respond
        {path(Stage::respond, sixstep::keys::text), VT::text, "", "the answer returned"},
        {path(Stage::respond, keys::minutes), VT::number, "min", "the answer in minutes"},
        // the response
        {std::string("response.") + keys::minutes, VT::number, "min", "the answer in minutes"},
        {std::string("response.") + keys::raw_output, VT::number, "", "the raw output behind it"},
        // the model: what the next request is served from
        {std::string("model.") + keys::bias, VT::number, "min", "b of the loaded weights (before loading: of the checkpoint)"},
        {std::string("model.") + keys::w_distance, VT::number, "min/km", "w_distance, likewise"},
        {std::string("model.") + keys::w_congestion, VT::number, "min", "w_congestion, likewise"},
        {std::string("model.") + keys::w_express_lane, VT::number, "min", "w_express_lane, likewise"},
        {std::string("model.") + sixstep::keys::cold_load_ms, VT::number, "ms", "time of the last cold load"},
        {std::string("model.") + keys::frozen, VT::text, "", "\"yes\" once training was frozen"},
        // training: the trainer's latest step
        {std::string("train.") + keys::step, VT::number, "", "steps done (1-based)"},
        {std::string("train.") + keys::loss, VT::number, "min²", "mean squared error before the latest update"},
        {std::string("train.") + keys::first_loss, VT::number, "min²", "the loss before the first step"},
        {std::string("train.") + keys::final_loss, VT::number, "min²", "the loss on the current parameters"},
        {std::string("train.") + keys::examples, VT::number, "", "examples in the training data"},
        {std::string("train.") + keys::bias, VT::number, "min", "b after the latest step"},
        {std::string("train.") + keys::w_distance, VT::number, "min/km", "w_distance after the latest step"},
        {std::string("train.") + keys::w_congestion, VT::number, "min", "w_congestion after the latest step"},
        {std::string("train.") + keys::w_express_lane, VT::number, "min", "w_express_lane after the latest step"},
        {std::string("train.") + keys::grad_bias, VT::number, "", "∂L/∂b of the latest step"},
        {std::string("train.") + keys::grad_distance, VT::number, "", "∂L/∂w_distance of the latest step"},
        {std::string("train.") + keys::grad_congestion, VT::number, "", "∂L/∂w_congestion of the latest step"},
        {std::string("train.") + keys::grad_express_lane, VT::number, "", "∂L/∂w_express_lane of the latest step"},
        {std::string("train.") + keys::frozen, VT::text, "", "\"yes\" once training was frozen"},
    };
    add_common_paths(p);
    return p;
}

// A value stage 1 could not read, found when the lesson loads: what the
// job itself would throw (read_feature), under the normalize setting then in
// force. Out-of-range values and units dropped by normalize: false pass —
// they are the skew the lessons show.
void check_request_value(std::string_view field, std::string_view value, const FieldLookup& setting) {
    const int i = feature_index(field);
    if (i < 0) return;  // an unknown field: the loader names it
    (void)read_feature(features[static_cast<size_t>(i)], value, setting(setting_names::normalize) == "true");
}

// "3000 m" as request.distance_km holds it (3), "30%" as request.congestion
// does (0.3): the units stage 1 reads, converted as it converts them.
std::optional<UnitReading> in_path_unit(std::string_view checked, std::string_view written) {
    const std::tuple<std::string, int, const char*> feature_of[] = {
        {path(Stage::request, keys::distance_km), 0, "km"},
        {path(Stage::request, keys::congestion), 1, "a fraction 0..1"},
        {path(Stage::request, keys::express_lane), 2, "0 or 1"}};
    for (const auto& [p, i, unit] : feature_of) {
        if (p != checked) continue;
        UnitReading out{unit, std::nullopt};
        try {
            const Quantity q = parse_quantity(written);
            if (const std::optional<double> f = unit_factor(features[static_cast<size_t>(i)].dimension, q.unit))
                out.value = q.value * *f;
        } catch (const Error&) {
        }
        return out;
    }
    return std::nullopt;
}

std::vector<Headline> headlines() {
    return {
        {Stage::request, {{keys::distance_km}, {keys::congestion}, {keys::express_lane}}},
        {Stage::load, {{keys::weights, 3}}},
        {Stage::forward, {{keys::raw_output, 5}}},
        {Stage::output, {{keys::raw_output, 5}}},
        {Stage::postprocess, {{keys::minutes}}},
        {Stage::respond, {{keys::minutes}}},
    };
}

}  // namespace

const ModelDescription& DeliveryModel::describe() {
    static const ModelDescription d{"delivery", "the delivery-time linear regression: 5 + 2·km + 10·congestion − 2·lane",
                                    knobs(), paths(), headlines(), /*trains=*/true, /*panels=*/{},
                                    /*work=*/{},  // a request is a few multiply-adds: nothing to budget
                                    /*check_request_value=*/check_request_value, /*in_path_unit=*/in_path_unit};
    return d;
}

}  // namespace sixstep::delivery
