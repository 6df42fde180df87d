// The lesson interpreter: runs a Lesson one step at a time against a real
// engine, and keeps everything a front end needs to draw in LessonState.
//
//     Interpreter it(load_lesson("lessons/01-six-steps.yaml"));
//     while (!it.finished()) {
//         StepReport r = it.step();      // narration, new trace events, checks
//         ...                            // it.state() is the whole picture
//     }
//
// Going back is replay: go_to(k) restarts and runs k steps again. Everything
// random is seeded, so the replay computes the same numbers (timings differ).
// The interpreter is not thread-safe; app/core/session.h runs it on a worker
// thread and hands copies of LessonState to the UI.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/core/lesson.h"
#include "app/core/llm_panels.h"
#include "pipeline/delivery/dataset.h"
#include "pipeline/core/model_description.h"
#include "pipeline/core/pipeline.h"

namespace sixstep::delivery {
class DeliveryModel;
class Trainer;
}  // namespace sixstep::delivery
namespace sixstep::llm {
class LlmModel;
}

namespace sixstep::app {

struct CheckResult {
    Expectation expectation;
    bool passed = false;
    // Both texts are cut in the middle past 1,000 bytes (elide): a failed check
    // on a generated page or a 100 KB field of a lesson stays one readable line.
    std::string got;      // what the trace held, formatted; "(nothing)" when absent
    std::string against;  // the compared paths' and names' values: "respond.prefill_tok_s = 812"
    std::vector<std::pair<std::string, std::string>> named;  // the same, one (name, value) each
    // "> 2 × kv_experiment.cached_total_ms (kv_experiment.cached_total_ms = 31.2)",
    // in the lesson's language: its "and", and sixstep's own words for a value
    // that is not there ("(nothing: …)"); paths and values stay as they are.
    std::string expected_text(std::string_view lang = "en") const;
    // `got`, with sixstep's own words in the lesson's language likewise.
    std::string got_text(std::string_view lang = "en") const;
    std::optional<double> got_number;  // the value itself, when it is a number (check --repeat's margins)
};

// One request served by a `serve:` step.
struct ServedRequest {
    std::string text;             // the answer
    std::vector<Field> fields;    // the response's fields (delivery: minutes, raw_output)
    std::string answer_key;       // the respond stage's headline field: "minutes"; "text" when it has none
    Value answer;                 // its value: 11
    double total_ms = 0;          // all six stages
    bool cold = false;            // this one paid the load
};

// A model setting by name, as Knob::check writes it: "normalize" = "false".
struct NamedValue {
    std::string name;
    std::string value;  // "" = none
};

// One gradient-descent step as the window and the report show it.
struct TrainRecord {
    int step = 0;                     // 1-based
    double loss = 0;                  // before the update
    std::vector<double> grad;         // ∂L/∂θ, one per parameter
    std::vector<double> params;       // θ after the update
    std::vector<double> predictions;  // ŷ for the first few examples, before the update
    std::vector<double> labels;       // y for the same examples
};

struct TrainingState {
    bool active = false;                          // a trainer exists
    bool frozen = false;
    std::string data_path;
    int examples = 0;
    // The examples: from the lesson's start when a step trains (the window
    // shows them before the first step does), then the trainer's own.
    std::shared_ptr<const std::vector<delivery::Example>> data;
    double learning_rate = 0;
    std::vector<std::string> param_labels;        // for people: "b", "w distance", …
    std::vector<std::string> param_keys;          // train.<key>: "bias", "w_distance", …
    std::vector<std::string> grad_keys;           // train.<key>: "grad_bias", "grad_distance", …
    std::vector<double> target;                   // what the bundled data was made with (empty: unknown)
    std::vector<double> loss;                     // loss before step k (k = 1..), all steps so far
    std::vector<double> params;                   // after each step: param_keys.size() values per step
    std::optional<TrainRecord> last;              // the latest step in full (gradients, predictions)
    std::string weights_file;                     // where freeze saved the weights

    int steps() const { return static_cast<int>(loss.size()); }
    double param(int step, std::size_t i) const { return params[static_cast<std::size_t>(step) * param_keys.size() + i]; }
};

// Everything a front end draws. Cheap enough to copy once per frame.
struct LessonState {
    // the lesson
    std::string title, language, path;
    int step_count = 0;
    int position = 0;            // lesson steps done; the current step is position − 1
    std::string step_title;      // of the current step
    std::string narration;       // the current step's `say`
    std::vector<std::string> knobs;
    std::vector<std::string> panels_used;  // every panel a step `show:`s, in the order first shown

    // the current request
    Request request;
    std::vector<NamedValue> settings;   // the model's settings, in the order its description declares them
    Trace trace;                        // of the current request (partial while stepping)
    std::optional<Stage> last_stage;    // the stage that ran last
    std::optional<Stage> next_stage;    // the stage that runs next; empty when answered or none started
    std::optional<Stage> failed_stage;  // the stage whose error stopped the request (the diagram marks it)
    std::optional<Response> response;
    std::optional<std::string> error;   // the current step's engine error, if any

    // the model
    std::string model_kind;                          // a kind of pipeline/models.h
    const ModelDescription* description = nullptr;  // its knobs, paths and headlines (static data)
    std::string model_name;
    bool loaded = false;
    std::string checksum;                     // of the loaded weights; empty: the model has none of its own
    std::string weights_file;                 // where the weights come from; empty: in memory
    double cold_load_ms = 0;                  // of the last cold load, when the model reports it

    TrainingState training;
    PanelsState panels;                       // the transformer panels' data (llm lessons), what `show:` shows
    std::optional<Stage> inspect;             // `inspect:` of the latest step that had one: the inspector's stage
    std::vector<ServedRequest> served;        // by the latest serve step
    std::vector<CheckResult> checks;          // of the current step
    std::shared_ptr<const Exhibit> exhibit;   // the model's latest picture beyond the trace (exhibit.h)

    // A setting's current value ("" when the model has no such setting).
    const std::string& setting(std::string_view name) const;
};

// A train step of this many steps or fewer shows every one; a longer one
// shows steps 1–3, each power of ten and its last.
inline constexpr int show_every_train_step_up_to = 5;

// What one lesson step did, for narration.
struct StepReport {
    int index = 0;                             // 0-based step index
    const LessonStep* step = nullptr;
    std::vector<TraceEvent> events;            // stages run in this step, in order
    std::vector<TrainRecord> train_shown;      // every training step, or a readable subset (show_every_train_step_up_to)
    int train_steps = 0;                       // how many ran
    std::vector<ServedRequest> served;
    // What the step did beside its stages that a reader should know: "the
    // request ran again from the start …" when a panel needed data the first
    // run did not capture (its times are measured anew).
    std::vector<std::string> notes;
    std::optional<std::string> error;
    std::vector<CheckResult> checks;
    bool passed() const;
};

class Interpreter {
public:
    explicit Interpreter(Lesson lesson);
    ~Interpreter();

    const Lesson& lesson() const { return lesson_; }
    int position() const { return state_.position; }
    bool finished() const { return state_.position >= static_cast<int>(lesson_.steps.size()); }

    // Runs the next lesson step; never throws for engine errors. Throws
    // sixstep::Cancelled when interrupted (pipeline/core/progress.h): the
    // step stays undone, and the next step() runs it again.
    StepReport step();
    void restart();             // back to before step 1
    void go_to(int position);   // restart and replay `position` steps

    // A knob turned by the class: "distance" = "5 km", "normalize" = "false",
    // "mode" = "train", "prompt" = "Once upon a time", "temperature" = "0.8", …
    // — any knob the model's description declares. Recomputes the current
    // request as far as it had run. Throws sixstep::Error for an unknown knob
    // (with "did you mean") or a value of the wrong type or range.
    void turn_knob(const std::string& name, const std::string& value);

    // Commands of the panels (the window's clicks; lesson steps do the same).
    // Each throws sixstep::Error for a bad value, which also stays in
    // state().panels.message for the panel to show; the state stays as it was.
    //
    // Takes token `id` instead of sampling: the pending token when logits wait
    // to be sampled, else the latest one taken (the request is computed again
    // up to it); then generation continues to the next output stage.
    void force_token(int id);
    // The attention panel's layer and head (a new layer recomputes the request).
    void choose_attention(int layer, int head);
    // The panels the window shows: with the lesson's, they decide what is
    // captured. Switching a capture on recomputes the current request.
    void show_in_window(const std::vector<std::string>& panels);
    // The KV cache switched off: n_tokens from the current request's prompt, both ways.
    void run_kv_experiment(int n_tokens);
    void kv_calc(const KvCalcSpec& spec);

    const LessonState& state() const { return state_; }

    // Looks up a path used by `expect`: "<stage>.<key>", "response.text",
    // "train.loss", "model.checksum", "served.count", "error", …
    std::optional<Value> lookup(const std::string& path) const;

private:
    void reset_engine();
    void apply_settings(const std::vector<SettingChange>& changes);
    void run_request(const RunSpec& spec, std::vector<TraceEvent>* events);
    void rerun(int stages, bool was_done);     // the current request again, as far as it had run
    void drop_pipeline();                      // the next run starts a fresh request
    void kv_experiment(int n_tokens);
    void force(const Value& token, bool continue_to_output);
    bool show(const std::vector<std::string>& panels);  // true when the request ran again to fill a panel
    template <typename F>
    void panel_command(const char* panel, F&& f);
    llm::LlmModel& llm(const char* what);        // throws when the lesson's model is not the llm
    std::optional<Value> operand(const Operand& o) const;
    void train(const TrainSpec& spec, StepReport& report);
    void train_steps(const TrainSpec& spec, StepReport& report);  // train() without the rollback
    void preview_training_data();
    void freeze();
    void serve(const ServeSpec& spec, StepReport& report);
    CheckResult check(const Expectation& e) const;
    std::string why_nothing(const std::string& path) const;  // why a path has no value now; "" when unknown
    void refresh_state();
    delivery::DeliveryModel& delivery(const char* what);  // throws when the lesson's model is not the delivery one
    void remove_saved_weights();

    Lesson lesson_;
    std::unique_ptr<Model> model_;
    delivery::DeliveryModel* delivery_ = nullptr;  // model_, when it is the delivery model
    llm::LlmModel* llm_ = nullptr;                 // model_, when it is the llm
    std::unique_ptr<LlmPanels> panels_;            // with llm_
    std::vector<std::string> lesson_panels_;       // `show:` of the latest step that had one
    std::optional<Stage> lesson_inspect_;          // `inspect:` of the latest step that had one
    std::vector<std::string> window_panels_;       // what the window shows (kept across restarts)
    std::optional<PanelMessage> panel_message_;
    std::map<std::string, Value> remembered_;      // `remember:` names
    std::map<std::string, std::string> forgotten_;  // names a remember: found no value for: why
    std::unique_ptr<Pipeline> pipeline_;
    // The answer a step wrote before it started the request afresh (only
    // respond was left, and it ran for a token): its respond event and
    // response, for this step's checks. Cleared when the next step starts.
    Trace answered_;
    std::optional<Response> answered_response_;
    std::unique_ptr<delivery::Trainer> trainer_;
    int stages_run_ = 0;        // of the current pipeline, for knob replays
    std::string saved_dir_;     // where freeze saved the weights (removed with the interpreter)
    LessonState state_;
    // The data preview_training_data read, kept while its file is unchanged:
    // stepping back replays the lesson through restart().
    struct PreviewedData {
        std::string path;
        std::filesystem::file_time_type modified{};
        std::uintmax_t size = 0;
        std::shared_ptr<const std::vector<delivery::Example>> examples;
    };
    PreviewedData previewed_;
};

}  // namespace sixstep::app
