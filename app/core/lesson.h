// A lesson: the YAML script an instructor writes, parsed into plain structs.
// The format is documented in lessons/README.md. Loading checks every key and
// type and reports problems with file:line:column (see lesson_loader.cpp);
// running it is the interpreter's job.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/core/stage.h"
#include "pipeline/core/trace.h"
#include "pipeline/llm/backend_kind.h"

namespace sixstep::app {

// What `model:` says.
struct ModelSpec {
    std::string kind = "delivery";             // a kind of pipeline/models.h: "delivery", "llm", "serving", "endpoint"
    // delivery
    std::vector<std::pair<std::string, double>> weights;  // inline weights by name (bias, distance,
                                                          // congestion, express_lane); others: 5, 2, 10, −2
    std::optional<std::string> weights_file;   // or a weights file, relative to the lesson
    // llm, serving (the kinds that reads_gguf)
    std::string file;                          // the GGUF file, relative to the lesson
    std::string random;                        // or a random-weight F32 model of this preset (tiny, 15m,
                                               // 110m), written once to the temporary folder
    int threads = 0;                           // CPU threads; 0: all
    int top_n = 5;                             // rows of the next-token probability table
    llm::BackendKind backend = llm::BackendKind::cpu;  // where the forward pass runs: cpu, cuda or auto
    SourceLocation file_at;                    // where `file` or `weights_file` is written
    // endpoint: another OpenAI-compatible server, http://host:port; "" → the
    // lesson serves `file` itself, in-process, on an ephemeral loopback port
    std::string url;
    SourceLocation url_at;                     // where `url` is written
};

// The model kind that measures a real server (app/server/endpoint_model.h).
inline constexpr char endpoint_kind[] = "endpoint";

// What an expectation compares a value with: a literal, another path's value
// at the same moment, or a value an earlier step remembered (`remember:`).
struct Operand {
    enum class Kind { literal, path, remembered };
    Kind kind = Kind::literal;
    Value literal;             // a number or a text (Kind::literal)
    std::string name;          // the path ("respond.prefill_tok_s") or the remembered name ("short_ttft")
    double times = 1;          // a reference's number is multiplied by this: `{above: x, times: 2}`
    double plus = 0;           // … and then this added: `{equals: prompt_tokens, plus: 1}`
    std::string describe() const;  // "11", "\"mat\"", "2 × kv_experiment.cached_total_ms", "n + 1"
};

// One test on a value.
struct Condition {
    enum class Op { equals, near, contains, below, above };
    Op op = Op::equals;
    Operand operand;
    double tolerance = 0;      // near: |got − operand| ≤ tolerance
    std::string describe() const;  // "= 11", "≈ 11 ± 0.01", "contains \"min\"", "> 2 × x"
};

// One `expect:` entry: a path and what its value must satisfy — every
// condition (`{above: 0, below: 1}` is two), or, under `not:`, not all of them.
struct Expectation {
    std::string path;          // "forward.raw_output", "postprocess.text", "train.loss", "error"
    std::vector<Condition> conditions;
    bool negated = false;      // `not:`
    SourceLocation where;
    // "= 11", "> 0 and < 1", "not contains \"dog\""; `and` joins conditions (a Chinese lesson's "且").
    std::string describe(std::string_view and_word = "and") const;
};

// `run:` — how far to walk the current request.
struct RunSpec {
    enum class Kind { stage, through, token, all };  // token: until the next token is chosen (LLM)
    Kind kind = Kind::all;
    Stage through = Stage::respond;  // for Kind::through
};

// One entry of `set:` — a setting the lesson's model kind declares, with its
// value already checked (Knob::check: "true", "train", "0.5"; "" = none).
// Settings not named stay as they are.
struct SettingChange {
    std::string name;
    std::string value;
    SourceLocation where;
};

// `train:` — gradient-descent steps on the delivery data.
struct TrainSpec {
    int steps = 1;
    std::optional<double> learning_rate;   // default 0.005
    std::optional<std::string> data;       // CSV, relative to the lesson; default: the bundled data
    bool from_zero = false;                // `from: zero` restarts from all-zero weights
    SourceLocation where;                  // the `train` key
    SourceLocation data_at;                // the `data` value, when given
};

// `serve:` — send the current request N times (load once, serve many).
struct ServeSpec {
    int requests = 1;
};

// `kv_calc:` — the KV memory calculator (pipeline/serving/kv_calc.h): a
// preset's shape, typed sizes over it, an element type, tokens and sessions.
struct KvCalcSpec {
    std::string preset;                  // "article-36l", "stories-3m"; "" = all sizes typed
    std::optional<double> n_layer, n_head_kv, head_dim;  // override the preset's
    std::string dtype;                   // "f16", …; "" = the preset's (typed: f16)
    double n_tokens = 0;                 // per session; 0 = not given (an error unless typed later)
    double n_sessions = 1;
};

// `attention:` — which layer and head the attention panel shows.
struct AttentionSpec {
    int layer = 0;
    int head = 0;
    SourceLocation where;  // checked against the model's shape before step 1
};

struct LessonStep {
    SourceLocation where;       // the step's position in the file
    // A step written as a YAML alias (`- *intro`) repeats an earlier one, and
    // its positions are that step's lines: the index (0-based) of the step
    // it copies, so a failure can say which of the two failed; -1 otherwise.
    int copy_of = -1;
    std::string title;
    std::string say;            // narration
    std::optional<std::vector<std::pair<std::string, std::string>>> request;
    SourceLocation request_where;                                  // the `request` key
    std::map<std::string, SourceLocation, std::less<>> request_at;  // each request field's value, where written
    std::vector<SettingChange> set;
    std::optional<TrainSpec> train;
    bool freeze = false;
    std::optional<Value> force;             // the next token taken by hand: an id, or a piece (" rug")
    SourceLocation force_at;                // checked against the model's vocabulary before step 1
    std::optional<std::vector<std::string>> show;  // panels beside the inspector from here on (first on top)
    std::optional<Stage> inspect;           // the stage the inspector opens on, from here on
    std::optional<AttentionSpec> attention;
    std::optional<RunSpec> run;
    SourceLocation run_where;                // the `run` key
    std::optional<ServeSpec> serve;
    SourceLocation serve_where;              // the `serve` key
    std::optional<int> kv_experiment;       // tokens to generate with and without the KV cache
    std::optional<KvCalcSpec> kv_calc;
    std::vector<std::pair<std::string, std::string>> remember;  // name → path, kept for later expectations
    std::vector<std::string> knobs;  // what the class may change here: distance, congestion, …
    std::vector<Expectation> expect;
};

// `budget:` — the most work a lesson may ask for, summed over all its steps,
// so that a typo or a YAML alias repeated a thousand times cannot keep a
// classroom machine busy for hours. The defaults are far above what the
// bundled lessons use (10,001 training steps, 2,004 requests, 82,464 forward
// tokens, 44 simulations); a lesson that needs more raises them. Checked when
// the lesson is loaded, naming the step.
struct Budget {
    long long train_steps = 100000;       // gradient-descent steps of all train: steps together (and canaries')
    long long served_requests = 10000;    // requests of all serve: steps together (and canaries' streams)
    long long generated_tokens = 100000;  // tokens an llm lesson may generate (each run/serve at its max_tokens)
    long long forward_tokens = 1000000;   // token positions a serving lesson's experiments compute (each at its most)
    long long simulations = 1000;         // queue simulations of a serving lesson (up to 100 M requests each)
    long long simulated_requests = 2'000'000'000;  // their requests, warm-ups included (about two minutes' worth)
    long long model_bytes = 64LL << 30;   // bytes of model files the experiments read or write beyond the lesson's
                                          // own load, each pass counted at the model file's size (checked with the
                                          // file, by check_lesson_files)
};

// Where the passes over model-sized files reach a new total: the step, its
// YAML position, and the total so far (WorkDeclaration's model_file_passes).
struct ModelFileWork {
    size_t step = 0;
    SourceLocation at;
    long long passes = 0;
};

struct Lesson {
    std::string path;           // as given
    std::string title;
    std::string language = "en";
    std::string description;
    ModelSpec model;
    Budget budget;
    std::vector<LessonStep> steps;
    std::vector<ModelFileWork> model_file_work;  // filled by parse_lesson, charged by check_lesson_files
};

// Loads a lesson and checks it as a whole before its first step runs:
// parse_lesson, then check_lesson_files. Throws sixstep::Error with
// file:line:column; every front end reports it as an invalid lesson (exit 2).
Lesson load_lesson(const std::string& path);

// Checks the text: bad YAML, unknown keys, wrong types, missing required
// keys; settings, knobs, request fields and expect paths that the lesson's
// model kind does not declare (with "did you mean"); `train`/`freeze` for a
// kind that does not train, `freeze` before any training. Reads no other
// file.
Lesson parse_lesson(const std::string& yaml_text, const std::string& path);

// Checks every file the lesson names — model.file (a GGUF file that opens),
// model.weights_file, each train step's data (or, without `data`, the
// bundled assets/data/deliveries.csv) — resolved relative to the lesson's
// folder. Throws one sixstep::Error for all the problems found, one line
// each, at the position of the key that names the file.
void check_lesson_files(const Lesson& lesson);

// What `train:` reads without `data:`: assets/data/deliveries.csv in the data
// folder (pipeline/core/data_dir.h). Throws sixstep::Error when there is none.
std::string default_training_data();

// Every *.yaml and *.yml under a folder (recursively) or the file itself, sorted.
std::vector<std::string> find_lessons(const std::string& path);

// Where the bundled lessons are for someone who named none (the window's
// picker, the terminal's list): $SIXSTEP_LESSONS, ./lessons when there is
// one, else the data folder's lessons (pipeline/core/data_dir.h); "lessons"
// when there is no data folder either.
std::string default_lessons_folder();

// Resolves a path written in a lesson: relative to the lesson's folder.
std::string resolve_lesson_path(const Lesson& lesson, const std::string& relative);

}  // namespace sixstep::app
