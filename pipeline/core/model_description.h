// What a model kind says about itself, so that the interpreter, the window,
// lesson checking and the docs never need to know which model they drive:
//
//   knobs      what a lesson or the class may change: a request field
//              ("distance", "temperature") or a setting of the model
//              ("normalize", "mode"), with type, range, default, unit, meaning;
//   paths      every "<stage>.<key>" its trace events carry and the other
//              values it answers ("model.checksum", "train.loss"), with
//              meaning, unit and value type: what a lesson may `expect`;
//   headlines  which fields of each stage the window shows large;
//   work       what one request costs the engine, from its fields, so that
//              a lesson's work budget is added up before it runs.
//
// A description is static data, available without loading any weights, so a
// lesson is checked against it before its first step runs. pipeline/models.h
// is the one place that lists the kinds.
//
//     const ModelDescription& d = model_description("delivery");
//     const Knob& k = d.knob("dropout");   // throws, with "did you mean", when unknown
//     std::string v = k.check("0.5");       // the value as the model takes it, or an Error
//     model.apply_setting(k.name, v);
#pragma once
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/core/stage.h"

namespace sixstep {

// The three shapes of a traced Value (trace.h).
enum class ValueType { number, text, numbers };
std::string_view value_type_name(ValueType t);  // "number", "text", "numbers"

enum class KnobType {
    number,   // a decimal number, within [min, max]
    text,     // free text ("3 km", a prompt)
    boolean,  // on or off
    choice,   // one of a few words ("eval", "train")
};
std::string_view knob_type_name(KnobType t);  // "number", "text", "bool", "choice"

// What turning a knob changes.
enum class KnobTarget {
    request,  // the request field of the same name, for the next request
    setting,  // a setting of the model (Model::apply_setting), kept for later requests
};

// A setting value under which the model's answers cannot be trusted, and
// what the window says about it ("⚠ normalization OFF" / "normalization ✓").
struct Caution {
    std::string value;    // the risky value, as Knob::check returns it: "false", "train"
    std::string warning;  // while it holds: "normalization OFF"
    std::string ok;       // otherwise: "normalization"
};

struct Knob {
    std::string name;                          // as a lesson writes it: "dropout"
    KnobType type = KnobType::text;
    KnobTarget target = KnobTarget::request;
    std::string meaning;                       // one line, for people
    std::string unit;                          // "km", "tokens"; "" when dimensionless
    std::string default_value;                 // as a lesson writes it; "" = none
    double min = -std::numeric_limits<double>::infinity();  // number: lowest accepted
    double max = std::numeric_limits<double>::infinity();   // number: highest accepted
    bool min_exclusive = false;                // number: min itself is refused (top_p > 0)
    bool max_exclusive = false;                // number: max itself is refused (dropout < 1)
    bool whole = false;                        // number: integers only
    bool optional = false;                     // "none" (YAML null) removes the setting
    bool required = false;                     // request: every request must give it (the model has
                                               // no value of its own: delivery's features, the prompt)
    std::vector<std::string> choices;          // choice: the accepted words; boolean: how
                                               // false and true are written (default false, true)
    double slider_min = std::numeric_limits<double>::quiet_NaN();  // number: where values
    double slider_max = std::numeric_limits<double>::quiet_NaN();  // usually lie; NaN: no slider
    std::optional<Caution> caution;
    // In effect only while another setting has one value (dropout: while
    // mode is train); elsewhere the settings line says it is off ("dropout
    // 0.5 (off in eval)"). Empty: always in effect.
    std::string only_while_setting;            // "mode"
    std::string only_while_value;              // "train", as Knob::check returns it
    // text: a rule of its own, such as a list of numbers that must ascend;
    // throws sixstep::Error. Checked wherever the value is (a lesson's
    // request at its position when the lesson loads, a field typed in class).
    std::function<void(const std::string&)> rule;

    // Checks a value written by a lesson or typed by the class and returns it
    // as the model takes it ("yes" → "true", "none" → ""). Throws
    // sixstep::Error, e.g. "\"dropout\" must be at least 0 and below 1, got 1.5".
    std::string check(std::string_view value) const;
    // "number, 0 ≤ x < 1", "whole, 1 ≤ x ≤ 1000000", "number | none",
    // "eval | train", "false | true", "text".
    std::string range_text() const;
    bool has_slider() const { return !std::isnan(slider_min) && !std::isnan(slider_max); }
    const std::string& spelled(bool on) const;  // boolean: "true"/"false", or "1"/"0"
};

// A value a lesson can expect on.
struct PathInfo {
    std::string path;        // "forward.raw_output", "model.checksum"
    ValueType type = ValueType::number;
    std::string unit;        // "min", "ms", "tokens"; "" when dimensionless
    std::string meaning;     // one line, for people
    // The model's own text (a prompt, a token, what it generated): shown as
    // it is, never through a screen's catalogue: the token "Yes" is not the
    // word "yes" of a field's answer ("是").
    bool verbatim = false;
};

// One field a stage shows large in the window: "11 min", "“ mat” p = 0.43".
struct HeadlineField {
    HeadlineField(std::string key_, int digits_ = 6, bool quoted_ = false, std::string suffix_ = {},
                  std::string caption_ = {}, std::string prefix_ = {})
        : key(std::move(key_)), digits(digits_), quoted(quoted_), suffix(std::move(suffix_)), caption(std::move(caption_)),
          prefix(std::move(prefix_)) {}
    std::string key;
    int digits = 6;        // significant digits of a number
    bool quoted = false;   // text in “quotes”: token pieces, whose spaces matter
    std::string suffix;    // written straight after a number without a unit: "×" for a ratio ("193×")
    std::string caption;   // a few words under it saying what it is ("median TTFT"); else the field's label
    std::string prefix;    // written before it, where a caption would not fit: "p = " for a probability
};

// What the window shows large for one stage: the fields present, in order.
// A stage without a headline (or whose fields are all absent) shows its
// first output.
struct Headline {
    Stage stage = Stage::request;
    std::vector<HeadlineField> fields;
    std::string separator = " \u00b7 ";
    // The fields are alternatives: only the first present is shown (one
    // experiment's own figure before what every experiment reports).
    bool first_only = false;
};

// A panel the window can show for this kind beside the inspector (a lesson
// step names it in `show:`).
struct PanelInfo {
    std::string name;     // as a lesson writes it: "kv_cache"
    std::string meaning;  // one line, for people
};

// The engine work one request asks for, in the units of a lesson's work
// budget (app/core/lesson.h, Budget), so that a lesson is bounded before it
// runs: a YAML alias repeated a thousand times cannot keep a classroom
// machine busy for hours.
struct Work {
    long long generated_tokens = 0;  // tokens sampled one at a time (an llm request: its max_tokens)
    long long forward_tokens = 0;    // token positions computed by batched forward passes (serving
                                     // experiments: prompts, contexts and generated tokens together)
    long long simulations = 0;       // queue simulations (each stops at a bounded number of requests)
    long long simulated_requests = 0; // the requests those simulations run, warm-ups included
    long long train_steps = 0;       // gradient-descent steps a request runs itself (the canary's fine-tuning)
    long long served_requests = 0;   // requests a request answers through the six steps (the canary's stream)
    long long model_file_passes = 0; // times a request reads or writes a file as large as the lesson's model at
                                     // most, beyond the lesson's own load (quantizing: read the model, write a
                                     // copy, map it back; a cold start: map the file again)
};

// A request's field as the lesson gives it (checked by its knob), or the
// knob's default when the lesson leaves it out or the knob refuses it.
using FieldLookup = std::function<std::string(std::string_view name)>;

// How a kind declares the work of its requests, from the fields alone (no
// weights loaded): the lesson loader adds it up, step by step, without
// knowing which kind it checks.
struct WorkDeclaration {
    // How runs are charged.
    enum class Charge {
        at_stage,  // `stage` does the whole request's work, once: a run that passes it pays
                   // `whole` (serving: forward runs every pass of the experiment)
        each_run,  // every run asks for more: a run to the answer pays `whole`, a run of one
                   // stage or one token pays `one_step` (the llm's decode loop)
    };
    // The most work one whole request may cost; empty: too little to count
    // (the delivery model's few multiply-adds).
    std::function<Work(const FieldLookup& field)> whole;
    Charge charge = Charge::at_stage;
    Stage stage = Stage::forward;  // at_stage: the stage that does the work
    Work one_step;                 // each_run: what a run of one stage or one token costs
};

// A value written with a unit, as a path holds it (ModelDescription::in_path_unit).
struct UnitReading {
    std::string unit;             // the unit the path holds, in words: "km", "a fraction 0..1"
    std::optional<double> value;  // the written value in that unit; nothing when its unit does not convert
};

struct ModelDescription {
    std::string kind;                 // as a lesson's model.kind: "delivery", "llm"
    std::string title;                // one line: "the delivery-time linear regression"
    std::vector<Knob> knobs;          // in the order the docs list them
    std::vector<PathInfo> paths;      // stage paths first, then response, model, train
    std::vector<Headline> headlines;  // at most one per stage
    bool trains = false;              // lessons may `train:` and `freeze:` it (gradient descent
                                      // on its data); otherwise it is only served
    std::vector<PanelInfo> panels;    // beyond the inspector, in the order the window offers them
    WorkDeclaration work;             // what a request costs, for a lesson's work budget
    // Set by a kind whose requests take values its knobs would refuse
    // (delivery: "30%", "3 公里", an out-of-range distance — skew is the
    // lesson): throws sixstep::Error when the model could not read `value`
    // for request field `field` under the settings in force (`setting`
    // answers each one's value). The lesson loader asks it instead of the
    // field's knob; without it, the knob checks the value.
    std::function<void(std::string_view field, std::string_view value, const FieldLookup& setting)> check_request_value;
    // Set by a kind that reads units into some paths' values beyond their
    // `unit` (delivery: request.congestion is a fraction, so "30%" is 0.3;
    // request.distance_km takes "3000 m" as 3): the unit `path` holds and
    // `written`, a number with a unit, in it; nothing for a path this kind
    // does not read units into. The lesson loader's "write N" for an
    // expected value written with a unit says this number.
    std::function<std::optional<UnitReading>(std::string_view path, std::string_view written)> in_path_unit;

    const Knob* find_knob(std::string_view name) const;
    // Throws sixstep::Error: unknown knob "temprature" for the llm model — did
    // you mean "temperature"? (known: prompt, temperature, …)
    const Knob& knob(std::string_view name) const;
    // A knob whose target is a setting; the same error for anything else.
    const Knob& setting(std::string_view name) const;
    const PathInfo* find_path(std::string_view path) const;
    const PanelInfo* find_panel(std::string_view name) const;
    // True when some path starts with "<head>." ("kv_experiment").
    bool answers(std::string_view head) const;
    const Headline* headline(Stage s) const;

    std::vector<std::string> knob_names() const;
    std::vector<std::string> setting_names() const;
};

// Paths every model answers through the Pipeline and the Model interface —
// each stage's "ms" and "warnings", "load.cold", the weights checksums,
// "response.text", "model.loaded", "model.checksum" — appended to `paths`.
void add_common_paths(std::vector<PathInfo>& paths);

}  // namespace sixstep
