// A lesson: the YAML script an instructor writes, parsed into plain structs.
// The format is documented in lessons/README.md. Loading checks every key and
// type and reports problems with file:line:column (see lesson_loader.cpp);
// running it is the interpreter's job.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/core/stage.h"
#include "pipeline/core/trace.h"

namespace sixstep::app {

// What `model:` says.
struct ModelSpec {
    std::string kind = "delivery";             // a kind of pipeline/models.h: "delivery", "llm" or "serving"
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
    SourceLocation file_at;                    // where `file` or `weights_file` is written
};

// One `expect:` entry: a trace path and what it must hold.
struct Expectation {
    enum class Kind { equals, near, contains, below, above };
    std::string path;          // "forward.raw_output", "postprocess.text", "train.loss", "error"
    Kind kind = Kind::equals;
    Value expected;            // a number or a text
    double tolerance = 0;      // for near
    SourceLocation where;
    std::string describe() const;  // "= 11", "≈ 11 ± 0.01", "contains \"11 minutes\""
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

struct LessonStep {
    SourceLocation where;       // the step's position in the file
    std::string title;
    std::string say;            // narration
    std::optional<std::vector<std::pair<std::string, std::string>>> request;
    std::vector<SettingChange> set;
    std::optional<TrainSpec> train;
    bool freeze = false;
    std::optional<RunSpec> run;
    std::optional<ServeSpec> serve;
    std::vector<std::string> knobs;  // what the class may change here: distance, congestion, …
    std::vector<Expectation> expect;
};

// `budget:` — the most work a lesson may ask for, summed over all its steps,
// so that a typo or a YAML alias repeated a thousand times cannot keep a
// classroom machine busy for hours. The defaults are far above what the
// bundled lessons use (10,001 training steps, 140 requests); a lesson that
// needs more raises them. Checked when the lesson is loaded, naming the step.
struct Budget {
    long long train_steps = 100000;       // gradient-descent steps of all train: steps together
    long long served_requests = 10000;    // requests of all serve: steps together
    long long generated_tokens = 100000;  // tokens an llm lesson may generate (each run/serve at its max_tokens)
};

struct Lesson {
    std::string path;           // as given
    std::string title;
    std::string language = "en";
    std::string description;
    ModelSpec model;
    Budget budget;
    std::vector<LessonStep> steps;
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

// Every *.yaml under a folder (recursively) or the file itself, sorted.
std::vector<std::string> find_lessons(const std::string& path);

// Resolves a path written in a lesson: relative to the lesson's folder.
std::string resolve_lesson_path(const Lesson& lesson, const std::string& relative);

}  // namespace sixstep::app
