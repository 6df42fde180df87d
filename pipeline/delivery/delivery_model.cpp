#include "pipeline/delivery/delivery_model.h"

#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/delivery/trace_keys.h"
#include "pipeline/delivery/weights_file.h"

namespace sixstep::delivery {

namespace {

// Numbers as a person writes them: 11, 6.4, −2 (with a real minus sign), to
// six significant digits everywhere, so that one value reads the same in
// every stage: 1.864 mi is 2.99982 km, not 3, and its forward pass sums to
// the raw output's 10.9996, not to 11 beside a raw output of 10.9996.
std::string num(double x) {
    if (std::fabs(x) < 5e-10) x = 0;
    std::string s = (x == std::round(x) && std::fabs(x) < 1e12) ? fmt::format("{:.0f}", x) : fmt::format("{:.6g}", x);
    if (s[0] == '-') s = "\u2212" + s.substr(1);
    return s;
}

// The digits num() writes, for a stage's in: and out: lines too (not for
// its times): "out: raw output = 10.9996" under the working's 10.9996.
void as_in_the_working(TraceEvent& ev) {
    for (auto* fields : {&ev.inputs, &ev.outputs})
        for (Field& f : *fields)
            if (f.unit != "ms") f.digits = 6;
}

std::string term(double w, double x) {
    std::string ws = num(w);
    if (w < 0) ws = "(" + ws + ")";
    return ws + "\u00d7" + num(x);
}

}  // namespace

std::string delivery_text(double minutes, const std::string& lang) {
    if (lang == "zh") return fmt::format("预计送达时间：{} 分钟", num(minutes));
    return fmt::format("Estimated delivery time: {} minute{}", num(minutes), minutes == 1 ? "" : "s");
}

// ---- one request --------------------------------------------------------------

class DeliveryJob : public sixstep::Job {
public:
    DeliveryJob(DeliveryModel& model, Request request) : model_(model), request_(std::move(request)) {}

    void normalize(TraceEvent& ev) override;
    void forward(TraceEvent& ev) override;
    void output(TraceEvent& ev) override;
    bool postprocess(TraceEvent& ev) override;
    Response respond(TraceEvent& ev) override;

private:
    DeliveryModel& model_;
    Request request_;
    std::array<double, n_features> x_{};  // normalized features, in training units
    double raw_ = 0;                      // the model's raw output
    double minutes_ = 0;                  // after postprocessing
    std::string text_;
};

void DeliveryJob::normalize(TraceEvent& ev) {
    const Settings& s = model_.settings();
    for (const auto& [key, value] : request_.fields) {
        ev.in(key, value, "", std::string(key));
        if (feature_index(key) < 0)
            throw Error(fmt::format("unknown feature \"{}\" (the model knows distance, congestion, express_lane)", key));
    }
    ev.summary = s.normalize ? "parse each field and convert it to the unit the model was trained on"
                             : "normalization is OFF: numbers go to the model as written, units dropped";
    for (int i = 0; i < n_features; ++i) {
        const Feature& f = features[static_cast<size_t>(i)];
        const std::string* raw = request_.get(f.name);
        if (!raw)
            throw Error(fmt::format("missing feature \"{}\" (the model needs distance, congestion and express_lane)", f.name));
        const FeatureReading reading = read_feature(f, *raw, s.normalize);
        const Quantity& q = reading.written;
        const double x = reading.x;
        if (s.normalize) {
            if (reading.factor != 1.0)
                // The factor as defined (1 mi = 1.609344 km), not rounded.
                ev.says(fmt::format("{}: \"{}\" → {} {} (× {})", f.name, *raw, num(x), training_unit(f.dimension),
                                    reading.factor));
            else if (f.dimension == Dimension::length && q.unit.empty())
                // Lesson 02's skew is a unit the sender meant and nobody wrote: say what was assumed.
                ev.says(fmt::format("{}: \"{}\" → {} {} (no unit given: read in the training unit)", f.name, *raw,
                                    num(x), training_unit(f.dimension)));
            else
                ev.says(fmt::format("{}: \"{}\" → {}", f.name, *raw, num(x)));
        } else if (!q.unit.empty()) {
            ev.says(fmt::format("{}: \"{}\" → {} (unit dropped, sent as if it were {})", f.name, *raw, num(x),
                                training_unit(f.dimension)));
        } else {
            ev.says(fmt::format("{}: \"{}\" → {}", f.name, *raw, num(x)));  // no unit to drop
        }
        if (s.range_check && (x < f.train_min || x > f.train_max))
            ev.warnings.push_back(fmt::format("{} = {} is outside the training range {}–{}{}: the model never saw "
                                              "such a request, do not trust the answer",
                                              f.name, num(x), num(f.train_min), num(f.train_max),
                                              f.dimension == Dimension::length ? " km" : ""));
        x_[static_cast<size_t>(i)] = x;
    }
    ev.out(keys::distance_km, x_[0], "km", "distance");
    ev.out(keys::congestion, x_[1], "", "congestion");
    ev.out(keys::express_lane, x_[2], "", "express lane");
    ev.out(keys::features, std::vector<double>(x_.begin(), x_.end()), "", "feature vector");
    ev.out(keys::normalized, std::string(s.normalize ? "yes" : "no"), "", "normalization");
    as_in_the_working(ev);
}

void DeliveryJob::forward(TraceEvent& ev) {
    throw_if_cancelled();  // once per request: where Ctrl+C stops a long serve
    const Params& p = model_.weights();
    const Settings& s = model_.settings();
    std::array<double, n_features> x = x_;
    ev.in(keys::features, std::vector<double>(x.begin(), x.end()), "", "feature vector");
    if (s.mode == Mode::train && s.dropout > 0) {
        // Inverted dropout, as in training: drop each input with probability p and
        // scale the survivors by 1/(1−p). Left on at inference, identical
        // requests get different answers.
        std::bernoulli_distribution keep(1.0 - s.dropout);
        std::vector<double> mask;
        for (auto& xi : x) {
            const bool k = keep(model_.rng_);
            mask.push_back(k ? 1.0 : 0.0);
            xi = k ? xi / (1.0 - s.dropout) : 0.0;
        }
        ev.warnings.push_back("train mode: dropout is active at inference — call eval() before serving");
        ev.says(fmt::format("dropout (train mode, p = {}): mask {} → x = {}", num(s.dropout),
                            format_value(mask), format_value(std::vector<double>(x.begin(), x.end()))));
        ev.out(keys::dropout_mask, mask, "", "dropout mask");
    }
    raw_ = p.bias;
    std::string line = num(p.bias);
    std::vector<double> terms;
    for (int i = 0; i < n_features; ++i) {
        const double t = p.w[static_cast<size_t>(i)] * x[static_cast<size_t>(i)];
        raw_ += t;
        terms.push_back(t);
        line += " + " + term(p.w[static_cast<size_t>(i)], x[static_cast<size_t>(i)]);
    }
    line += " = " + num(raw_);
    // A distance of 1e308 km or a weight of 1e308 overflows the sum: say so
    // rather than promise "inf minutes".
    if (!std::isfinite(raw_))
        throw Error(fmt::format("the forward pass overflowed: {} (an input or a weight too large for a double)", line));
    ev.summary = "time = b + w_distance·distance + w_congestion·congestion + w_express·express_lane";
    ev.says(line);
    ev.out(keys::terms, terms, "min", "terms");
    ev.out(keys::raw_output, raw_, "", "raw output");
    ev.out(keys::mode, mode_name(s.mode), "", "mode");
    as_in_the_working(ev);
}

void DeliveryJob::output(TraceEvent& ev) {
    ev.summary = "the raw output is a bare number: the model knows nothing of minutes or customers";
    ev.in(keys::raw_output, raw_);
    ev.says(fmt::format("raw output = {}", num(raw_)));
    ev.out(keys::raw_output, raw_, "", "raw output");
    as_in_the_working(ev);
}

bool DeliveryJob::postprocess(TraceEvent& ev) {
    const Settings& s = model_.settings();
    ev.in(keys::raw_output, raw_, "", "raw output");
    minutes_ = std::round(raw_);
    ev.says(fmt::format("round({}) = {} minutes", num(raw_), num(minutes_)));
    std::string rule = "none";
    if (s.minimum_minutes && minutes_ < *s.minimum_minutes) {
        ev.says(fmt::format("business rule: never promise less than {} minutes → {}", num(*s.minimum_minutes),
                            num(*s.minimum_minutes)));
        minutes_ = *s.minimum_minutes;
        rule = fmt::format("minimum {} minutes", num(*s.minimum_minutes));
    }
    // Weights from a file can make the sum negative (a bias of −1000): the
    // answer is what the model said, and the warning says it is nonsense.
    if (minutes_ < 0)
        ev.warnings.push_back(fmt::format("the model promises {} minutes, less than none: its weights are wrong for "
                                          "this request (a minimum rule would catch it)",
                                          num(minutes_)));
    text_ = delivery_text(minutes_, s.lang);
    ev.summary = "round, add units, apply business rules, say it in the customer's language";
    ev.says("text: " + text_);
    ev.out(keys::minutes, minutes_, "min", "minutes");
    ev.out(keys::rule, rule, "", "business rule applied");
    ev.out(sixstep::keys::text, text_, "", "text");
    as_in_the_working(ev);
    return false;  // one forward pass is the whole answer
}

Response DeliveryJob::respond(TraceEvent& ev) {
    ev.summary = "return the answer to the caller";
    ev.out(sixstep::keys::text, text_, "", "response");
    ev.out(keys::minutes, minutes_, "min", "minutes");
    as_in_the_working(ev);
    Response r;
    r.text = text_;
    r.fields.push_back({keys::minutes, minutes_, "min", "minutes"});
    r.fields.push_back({keys::raw_output, raw_, "", "raw output"});
    return r;
}

// ---- the model ------------------------------------------------------------------

DeliveryModel::DeliveryModel(Params checkpoint) : checkpoint_(checkpoint) { reseed(); }

void DeliveryModel::use_weights_file(std::string path) {
    file_ = std::move(path);
    file_preview_.reset();
    unload();
}

void DeliveryModel::use_params(Params checkpoint) {
    checkpoint_ = checkpoint;
    file_.clear();
    file_preview_.reset();
    unload();
}

void DeliveryModel::unload() {
    weights_.reset();
    weights_changed();
}

void DeliveryModel::reseed() { rng_.seed(settings_.seed); }

void DeliveryModel::load(TraceEvent& ev) {
    if (weights_) {
        ev.summary = "already in memory: reuse the loaded weights (load once, serve many)";
        ev.out(sixstep::keys::cold, std::string("no"), "", "cold start");
    } else {
        const auto t0 = std::chrono::steady_clock::now();
        weights_ = file_.empty() ? checkpoint_ : load_weights(file_);
        weights_changed();
        cold_load_ms_ = ms_since(t0);
        ev.summary = file_.empty() ? "cold start: load the parameters into memory"
                                   : "cold start: read the frozen weights file into memory";
        ev.out(sixstep::keys::cold, std::string("yes"), "", "cold start");
        // A part of the stage's time (the card's): named so, or the two read as one figure twice.
        ev.out(sixstep::keys::cold_load_ms, cold_load_ms_, "ms", "loading the weights");
        if (!file_.empty()) ev.in(keys::file, file_, "", "weights file");
    }
    const Params& p = *weights_;
    ev.says(fmt::format("b = {}, w = [{}, {}, {}]", num(p.bias), num(p.w[0]), num(p.w[1]), num(p.w[2])));
    ev.out(keys::bias, p.bias, "min", "b");
    ev.out(keys::w_distance, p.w[0], "min/km", "w distance");
    ev.out(keys::w_congestion, p.w[1], "min", "w congestion");
    ev.out(keys::w_express_lane, p.w[2], "min", "w express lane");
    ev.out(keys::weights, std::vector<double>{p.bias, p.w[0], p.w[1], p.w[2]}, "", "weights");
    as_in_the_working(ev);
}

std::uint64_t DeliveryModel::weights_checksum() const {
    if (!weights_) return 0;
    const auto a = weights_->as_array();
    return checksum_bytes(a.data(), sizeof(a));
}

const Params& DeliveryModel::weights() const {
    if (!weights_) throw Error("the model is not loaded yet (stage 2 loads it)");
    return *weights_;
}

// Values come checked by the description's Knob::check: "true"/"false",
// "eval"/"train", numbers in range, "" for no minimum.
void DeliveryModel::apply_setting(std::string_view name, const std::string& value) {
    const Knob& k = description().setting(name);  // unknown names throw, with "did you mean"
    Settings& s = settings_;
    if (k.name == setting_names::normalize) s.normalize = value == "true";
    else if (k.name == setting_names::range_check) s.range_check = value == "true";
    else if (k.name == setting_names::mode) s.mode = value == mode_name(Mode::train) ? Mode::train : Mode::eval;
    else if (k.name == setting_names::dropout) s.dropout = std::stod(value);
    else if (k.name == setting_names::seed) {
        s.seed = std::stoull(value);
        reseed();
    } else if (k.name == setting_names::minimum_minutes) {
        if (value.empty()) s.minimum_minutes.reset();
        else s.minimum_minutes = std::stod(value);
    } else if (k.name == setting_names::lang) s.lang = value;
    else Model::apply_setting(name, value);  // declared but not applied here: says so
}

std::string DeliveryModel::setting(std::string_view name) const {
    const Knob& k = description().setting(name);
    const Settings& s = settings_;
    if (k.name == setting_names::normalize) return s.normalize ? "true" : "false";
    if (k.name == setting_names::range_check) return s.range_check ? "true" : "false";
    if (k.name == setting_names::mode) return mode_name(s.mode);
    if (k.name == setting_names::dropout) return format_value(Value{s.dropout});
    if (k.name == setting_names::seed) return std::to_string(s.seed);
    if (k.name == setting_names::minimum_minutes) return s.minimum_minutes ? format_value(Value{*s.minimum_minutes}) : "";
    if (k.name == setting_names::lang) return s.lang;
    return Model::setting(name);
}

std::optional<Value> DeliveryModel::property(std::string_view key) const {
    // The loaded weights, or before loading what the next load reads: the
    // checkpoint in memory, or the weights file (read once for this, not the
    // built-in defaults it showed before).
    const Params* next = &checkpoint_;
    if (!weights_ && !file_.empty()) {
        if (!file_preview_) {
            try {
                file_preview_ = load_weights(file_);
            } catch (const Error&) {
                return std::nullopt;  // the load will say what is wrong with it
            }
        }
        next = &*file_preview_;
    }
    const Params& p = weights_ ? *weights_ : *next;
    if (key == keys::bias) return p.bias;
    if (key == keys::w_distance) return p.w[0];
    if (key == keys::w_congestion) return p.w[1];
    if (key == keys::w_express_lane) return p.w[2];
    if (key == sixstep::keys::cold_load_ms) return cold_load_ms_;
    return std::nullopt;
}

std::unique_ptr<Job> DeliveryModel::start(const Request& request) {
    return std::make_unique<DeliveryJob>(*this, request);
}

}  // namespace sixstep::delivery
