// Broken lessons: each gives one exact message at the right file:line:column.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/core/lesson.h"
#include "pipeline/core/text.h"

using namespace sixstep;
using namespace sixstep::app;

namespace {
struct BadLesson {
    const char* file;
    int line, column;
    const char* message;
};

const BadLesson bad_lessons[] = {
    {"bad-expect-path.yaml", 6, 7,
     "expectation \"raw_output\" must be a path like forward.raw_output, train.loss or served.count"},
    {"bad-knob.yaml", 4, 23,
     "unknown knob \"weather\" for the delivery model (known: distance, congestion, express_lane, normalize, "
     "range_check, mode, dropout, seed, minimum_minutes, lang)"},
    {"bad-lang-setting.yaml", 3, 17, "\"lang\" must be en or zh, got \"fr\""},
    {"bad-language.yaml", 2, 11, "\"language\" must be en or zh, got \"fr\""},
    {"bad-mode.yaml", 3, 17, "\"mode\" must be eval or train, got \"training\" \u2014 did you mean \"train\"?"},
    {"bad-model-kind.yaml", 3, 9, "unknown model kind \"gpt5\" (known: delivery, llm, serving, endpoint)"},
    {"bad-number.yaml", 3, 20, "\"steps\" must be a number, got \"many\""},
    {"bad-run.yaml", 4, 10,
     "\"run\" must be stage, token, all or a stage name (request, load, forward, output, postprocess, respond), "
     "got \"sideways\""},
    {"inspect-misspelt-stage.yaml", 5, 14,
     "\"inspect\" names a stage (request, load, forward, output, postprocess, respond), got \"foward\" — did you "
     "mean \"forward\"?"},
    {"llm-unknown-knob.yaml", 5, 21,
     "unknown knob \"temprature\" for the llm model — did you mean \"temperature\"? (known: prompt, max_tokens, "
     "temperature, top_k, top_p, min_p, seed, stop, force)"},
    {"llm-unknown-path.yaml", 7, 7,
     "unknown path \"forward.raw_output\" for the llm model; it is a path of the delivery model (`sixstep paths "
     "--model llm` lists them)"},
    // At the value, exit 2 (it failed at run time, at the step); a step that expects the error may still send it.
    {"llm-request-out-of-range.yaml", 4, 58, "\"temperature\" must be from 0 to 100, got -1"},
    {"llm-bad-backend.yaml", 5, 12, "\"backend\" must be cpu, cuda or auto, got \"gpu\" — did you mean \"cpu\"?"},
    {"backend-on-delivery.yaml", 4, 12, "\"backend\" is for models read from GGUF files (kind: llm or serving)"},
    {"serving-without-file.yaml", 9, 27, "experiment traffic runs on a language model, and this lesson's model has none: give the model a GGUF \"file\" (or \"random\"); only canary runs without one"},
    {"serving-threads-without-file.yaml", 4, 12, "\"threads\" is for the model in \"file\" (or \"random\"), and this serving model has none"},
    {"serving-list-out-of-order.yaml", 6, 53, "\"batch_sizes\" must ascend: 32 after 64"},
    {"expect-number-with-unit.yaml", 6, 25, "\"11 min\" is a number with a unit: write 11 — response.minutes is compared in its own unit (min)"},
    {"expect-word-for-number.yaml", 6, 31, "response.minutes is a number, and \"eleven\" is text: a number never equals a text"},
    {"below-unknown-name.yaml", 6, 33, "\"first_answer\" is neither a path nor a name an earlier step remembers (a remembered name comes from an earlier step's remember:)"},
    {"tol-with-unit.yaml", 5, 49, "\"tol\" must be a number, got \"1 min\" — write 1"},
    {"serving-path-of-another-experiment.yaml", 12, 7, "postprocess.q4_0_file_ratio is answered by the quantization experiment, and this step's request runs batch_sweep"},
    // A setting the request's experiment does not read was ignored: the default (traffic) ran, and passed.
    {"serving-setting-of-another-experiment.yaml", 5, 28, "batch_sizes is a setting of the batch_sweep experiment; this request runs traffic (the default) — add experiment: batch_sweep"},
    {"serving-setting-of-two-other-experiments.yaml", 4, 42, "context is a setting of the batch_sweep and queue experiments; this request runs bill — leave it out, or run experiment: batch_sweep or queue"},
    // It found nothing when the step ran: traffic has a baseline only with compare.
    {"serving-ratio-without-compare.yaml", 8, 7, "postprocess.ttft_p50_ratio is a figure of the baseline run, which traffic runs only with compare: policy, prefix_cache or kv_layout; this step's request has no compare — add compare: policy to the request"},
    // It never equals; under not, it always held.
    {"text-equals-number.yaml", 6, 7, "response.text is a text, and response.minutes is a number: a text never equals a number (compare two texts, or two numbers)"},
    // It was read as 1: full congestion.
    {"congestion-yes.yaml", 3, 45, "congestion: \"yes\" is a yes/no answer, and congestion is a share: a fraction 0..1 or a percentage: 0.3, \"30%\""},
    {"panel-of-another-kind.yaml", 4, 11, "unknown panel \"real_server\" for the llm model (known: inspector, tokens, next_token, kv_cache, timeline, attention, logit_lens, kv_experiment, kv_calc); it is a panel of the endpoint model (kind: endpoint)"},
    // It failed only when the step ran (exit 1), the bundled model's context known before.
    {"llm-max-tokens-past-context.yaml", 4, 55, "prompt (5 tokens) + max_tokens (600) does not fit in the context of 512 tokens (n_ctx); ask for at most 508 tokens (the last one is never fed back, so it needs no place)"},
    {"expect-quoted-number.yaml", 6, 25, "\"11\" is quoted, so it is text, and response.minutes is a number: write it without quotes"},
    // It held only for the text "11"; the minutes are response.minutes.
    {"number-for-text.yaml", 6, 22, "response.text is a text, and 11 is a number: quote it (\"11\") to compare with the text, or check a path that holds the number"},
    // It failed at its step ("not a number"), or under not always held.
    {"remembered-text-as-bound.yaml", 8, 7, "\"answer\" remembers response.text, a text: above compares numbers (remember a path that holds one)"},
    {"text-path-times.yaml", 6, 7, "\"response.text\" is a text: times compares numbers"},
    {"llm-without-file.yaml", 3, 3, "kind llm needs \"file\": the GGUF file, relative to the lesson (or \"random\": a preset, for random weights; not both)"},
    {"run-misspelt-stage.yaml", 4, 10,
     "\"run\" must be stage, token, all or a stage name (request, load, forward, output, postprocess, respond), "
     "got \"forwrd\" — did you mean \"forward\"?"},
    {"unknown-request-field.yaml", 3, 15,
     "unknown request field \"distanse\" for the delivery model — did you mean \"distance\"? (known: distance, "
     "congestion, express_lane)"},
    {"setting-in-request.yaml", 3, 33,
     "\"normalize\" is a setting of the delivery model, not a request field: give it under set:"},
    {"train-llm.yaml", 5, 5, "\"train\" needs a model that trains: the llm model is only served (kind: delivery trains)"},
    {"freeze-before-train.yaml", 4, 5, "nothing to freeze: no step before this one trains (give train: first)"},
    // Nothing unfreezes a model: it read as if something did.
    {"freeze-false.yaml", 4, 13, "\"freeze: false\" does nothing: a model is trainable until a step freezes it, and frozen for good after; leave the key out"},
    {"knob-listed-twice.yaml", 4, 35, "\"distance\" is listed twice in knobs: the window shows each knob once"},
    // It said that file was missing.
    {"file-and-random.yaml", 2, 78, "give \"file\" or \"random\", not both: the model loads the GGUF file, or random weights of a preset's shape"},
    {"train-after-freeze.yaml", 5, 5,
     "step 2 froze the weights: training is over, the model only serves from there (train before freeze, or expect "
     "the error: error: {contains: \"frozen\"})"},
    {"bool-expected.yaml", 3, 22, "\"normalize\" must be true or false, got \"maybe\""},
    {"dropout-out-of-range.yaml", 3, 20, "\"dropout\" must be at least 0 and below 1, got 1.5"},
    {"empty-step.yaml", 3, 5,
     "step 1 does nothing: give it at least one of say, request, set, train, freeze, run, serve, expect, show, "
     "inspect, force, remember, attention, kv_experiment or kv_calc"},
    {"fractional-steps.yaml", 3, 12, "\"train\" must be a whole number from 1 to 1000000, got 2.5"},
    {"invalid-yaml.yaml", 3, 10,
     "invalid YAML: this \"[\" is never closed: a [\u2026] list ends with \"]\" (or write its items on the lines below, "
     "each after \"- \") (the parser stopped at line 4: end of sequence flow not found)"},
    {"missing-title.yaml", 1, 1, "the lesson has no \"title\""},
    {"not-a-mapping.yaml", 1, 1, "a lesson must be a mapping with title and steps"},
    {"request-not-a-mapping.yaml", 3, 14, "\"request\" must be a mapping, got a list"},
    // Columns in characters, as an editor counts them: "中文中文" is 12 bytes (yaml-cpp said 27).
    {"cjk-column.yaml", 3, 19,
     "unknown key \"sya\" in step 1 — did you mean \"say\"? (expected one of: title, say, request, set, train, "
     "freeze, force, show, inspect, attention, run, serve, kv_experiment, kv_calc, remember, knobs, expect)"},
    {"contains-empty.yaml", 6, 25, "\"contains\" needs some text: every value contains \"\""},
    {"numbers-on-text.yaml", 6, 7,
     "\"respond.text\" is a text: below, above and tol compare numbers (compare text with a quoted value or "
     "contains)"},
    // Under not, the word itself never matched: the check always held.
    {"reference-as-text.yaml", 6, 31,
     "\"forward.raw_output\" is a path: write {equals: forward.raw_output} to compare with its value, or quote it to "
     "compare with the text"},
    {"remembered-in-contains.yaml", 7, 38,
     "\"m\" is a name an earlier step remembers, and \"contains\" looks for text: quote it to look for the word "
     "itself"},
    // It loaded and changed nothing.
    {"top-n-on-serving.yaml", 5, 10,
     "\"top_n\" is for kind llm: the rows of its next-token probability table, which a serving lesson does not "
     "show"},
    {"seed-not-whole.yaml", 3, 17, "\"seed\" must be a whole number from 0 to 2147483647, got 1.5"},
    {"setting-in-llm-lesson.yaml", 4, 11,
     "\"temperature\" is a request field of the llm model, not a setting: give it in the request"},
    {"setting-not-scalar.yaml", 4, 16, "\"dropout\" must be a single value (number, 0 ≤ x < 1), got a list"},
    {"setting-without-value.yaml", 4, 7, "\"normalize\" needs a value (false | true)"},
    {"steps-not-a-list.yaml", 2, 8, "\"steps\" must be a non-empty list, got \"5\""},
    // It failed whatever the value, at the step: exit 1, not 2.
    {"range-upside-down.yaml", 6, 27,
     "no number is above 20 and below 5: the range is empty (swapped? {above: 5, below: 20})"},
    {"steps-empty.yaml", 2, 8, "\"steps\" is an empty list: a lesson needs a step"},
    // The delivery model's values as its first stage reads them, at the value
    // (they failed at run time: exit 1, at the step), under the normalize
    // setting then in force: express_lane 2 goes through unnormalized, a unit
    // no longer dropped is read.
    {"delivery-flag-not-0-or-1.yaml", 3, 62, "express_lane: \"2\" must be 0 or 1"},
    {"delivery-value-not-a-number.yaml", 3, 45,
     "congestion: \"high\" is not a number with an optional unit (a fraction 0..1 or a percentage: 0.3, \"30%\")"},
    {"delivery-unit-under-normalize.yaml", 7, 25, "distance: unit \"parsecs\" is not a length (use km, m or mi)"},
    {"tol-needs-number.yaml", 6, 29, "\"tol\" needs a numeric \"value\""},
    {"unknown-step-key.yaml", 4, 5,
     "unknown key \"sya\" in step 2 — did you mean \"say\"? (expected one of: title, say, request, set, train, "
     "freeze, force, show, inspect, attention, run, serve, kv_experiment, kv_calc, remember, knobs, expect)"},
    {"unknown-path.yaml", 6, 7,
     "unknown path \"forward.raw_outptu\" for the delivery model — did you mean \"forward.raw_output\"? "
     "(`sixstep paths --model delivery` lists them)"},
    {"list-expected-whole.yaml", 5, 29,
     "\"forward.terms\" is a list: check one of its numbers with {contains: 5}, or neighbours with {contains: "
     "\"5, -2\"}, not the whole list"},
    {"expect-not-indented.yaml", 6, 5,
     "unknown key \"response.minutes\" in step 1 (expected one of: title, say, request, set, train, freeze, force, "
     "show, inspect, attention, run, serve, kv_experiment, kv_calc, remember, knobs, expect); a path to check goes "
     "under expect:, indented further than it"},
    // A name from another kind's lessons says whose it is.
    {"knob-of-another-kind.yaml", 4, 13,
     "unknown knob \"temperature\" for the delivery model (known: distance, congestion, express_lane, normalize, "
     "range_check, mode, dropout, seed, minimum_minutes, lang); it is a knob of the llm model"},
    {"request-field-of-another-kind.yaml", 3, 15,
     "unknown request field \"prompt\" for the delivery model (known: distance, congestion, express_lane); it is a "
     "request field of the llm model"},
    {"path-of-another-kind.yaml", 5, 14,
     "unknown path \"respond.ttft_ms\" for the delivery model; it is a path of the llm model (`sixstep paths --model "
     "delivery` lists them)"},
    {"unknown-setting.yaml", 3, 11,
     "unknown setting \"normalise\" for the delivery model — did you mean \"normalize\"? (known: normalize, "
     "range_check, mode, dropout, seed, minimum_minutes, lang)"},
    {"unknown-top-key.yaml", 1, 1,
     "unknown key \"titel\" in lesson — did you mean \"title\"? (expected one of: title, language, description, "
     "model, budget, steps)"},
    {"weights-and-weights-file.yaml", 2, 59,
     "give \"weights\" or \"weights_file\", not both: the model loads one of them"},
    // The two not given were the article's, without a word; a weights file without them is refused.
    {"weights-partial.yaml", 4, 12,
     "\"weights\" gives 2 of the 4: \"congestion\" and \"express_lane\" are missing — a whole mapping reads {bias: 5, "
     "distance: 2, congestion: 10, express_lane: -2} (minutes, minutes per km, per unit of congestion, for the "
     "express lane)"},
    {"unknown-weight.yaml", 3, 22,
     "unknown key \"distanse\" in weights — did you mean \"distance\"? (expected one of: bias, distance, "
     "congestion, express_lane)"},
};
}  // namespace

TEST_CASE("every broken lesson gives its exact message and position") {
    for (const auto& b : bad_lessons) {
        const std::string path = std::string(SIXSTEP_TEST_DATA) + "/bad-lessons/" + b.file;
        CAPTURE(b.file);
        try {
            (void)load_lesson(path);
            FAIL("loaded without an error: ", b.file);
        } catch (const Error& e) {
            CHECK(e.message() == b.message);
            CHECK(e.where().file == path);
            CHECK(e.where().line == b.line);
            CHECK(e.where().column == b.column);
            CHECK(std::string(e.what()) ==
                  path + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) + ": " + b.message);
        }
    }
}

TEST_CASE("the bad-lessons folder holds exactly the cases above") {
    const auto files = find_lessons(std::string(SIXSTEP_TEST_DATA) + "/bad-lessons");
    CHECK(files.size() == std::size(bad_lessons));
}

// Files a lesson names are checked when it loads, relative to the lesson's
// folder, each problem at the key that names the file.
TEST_CASE("missing or unreadable model, weights and data files are found before step 1") {
    const std::string dir = std::string(SIXSTEP_TEST_DATA) + "/bad-lesson-files";
    const auto fails = [&](const std::string& file) -> Error {
        try {
            (void)load_lesson(dir + "/" + file);
        } catch (const Error& e) {
            return e;
        }
        FAIL("loaded without an error: ", file);
        return Error("");
    };
    {
        const Error e = fails("model-file-missing.yaml");
        CHECK(e.where().line == 4);
        CHECK(e.where().column == 9);
        CHECK(e.message() == "model file \"../assets/models/stories-9m-f16.gguf\" not found (relative to the lesson's "
                             "folder: " + std::string(SIXSTEP_TEST_DATA) + "/assets/models/stories-9m-f16.gguf); the "
                             "bundled models, found by name from any folder: stories-3m-f16.gguf, stories-3m-q8_0.gguf, "
                             "stories-draft-f16.gguf, stories-draft-f32.gguf");
    }
    {
        const Error e = fails("model-not-gguf.yaml");
        CHECK(e.where().line == 2);
        CHECK(e.where().column == 26);
        CHECK(e.message().rfind("model file \"model-not-gguf.yaml\": ", 0) == 0);
    }
    {
        const Error e = fails("weights-file-missing.yaml");
        CHECK(e.where().line == 2);
        CHECK(e.message() == "weights file \"trained.json\" not found (relative to the lesson's folder: " + dir +
                                 "/trained.json)");
    }
    {
        // Two missing files: one error, the first at its position, the second
        // on its own line with its own position.
        const Error e = fails("data-missing.yaml");
        CHECK(e.where().line == 3);
        CHECK(e.where().column == 29);
        CHECK(e.message() == "training data \"my-deliveries.csv\" not found (relative to the lesson's folder: " + dir +
                                 "/my-deliveries.csv)\n" + dir + "/data-missing.yaml:6:13: training data "
                                 "\"also-missing.csv\" not found (relative to the lesson's folder: " + dir +
                                 "/also-missing.csv)");
    }
    {
        // A speculative step's draft, found before step 1 at its value (it
        // failed at its step, at the step's position, with no bundled names).
        const Error e = fails("draft-missing.yaml");
        CHECK(e.where().line == 4);
        CHECK(e.where().column == 47);
        const std::string bundled_dir =
            std::filesystem::path(resolve_lesson_path(Lesson{}, "stories-3m-f16.gguf")).parent_path().string();
        CHECK(e.message() == "\"draft\": " + bundled_dir + "/stories-draft-q4.gguf does not exist (the draft is looked "
                             "up beside the target's file, then among the bundled models); the bundled models, found "
                             "by name from any folder: stories-3m-f16.gguf, stories-3m-q8_0.gguf, "
                             "stories-draft-f16.gguf, stories-draft-f32.gguf");
    }
    CHECK(find_lessons(dir).size() == 5);
    // A .yml lesson beside .yaml ones is found too (it was left out, unchecked).
    std::ofstream(std::filesystem::path(dir) / "also.yml") << "title: t\nsteps: [{say: hi}]\n";
    const std::vector<std::string> found = find_lessons(dir);
    CHECK(found.size() == 6);
    CHECK(std::count_if(found.begin(), found.end(), [](const std::string& f) { return f.ends_with("also.yml"); }) == 1);
    std::filesystem::remove(std::filesystem::path(dir) / "also.yml");
}

// A bundled lesson copied to a folder of the instructor's own keeps its
// "../assets/models/…", and a lesson may name a bundled file alone: what is
// not beside the lesson is looked for by name in the installed assets.
TEST_CASE("a model or data file not beside the lesson is the bundled file of that name") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "sixstep-own-lessons";
    std::filesystem::create_directories(dir);
    Lesson l;
    l.path = (dir / "mine.yaml").string();
    const std::string bundled = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
    CHECK(std::filesystem::equivalent(resolve_lesson_path(l, "../assets/models/stories-3m-f16.gguf"), bundled));
    CHECK(std::filesystem::equivalent(resolve_lesson_path(l, "stories-3m-f16.gguf"), bundled));
    CHECK(std::filesystem::equivalent(resolve_lesson_path(l, "deliveries.csv"),
                                      std::string(SIXSTEP_SOURCE_DIR) + "/assets/data/deliveries.csv"));
    // A file beside the lesson wins over a bundled one of the same name.
    std::ofstream(dir / "deliveries.csv") << "distance_km,congestion,express_lane,minutes\n3,0,0,11\n";
    CHECK(resolve_lesson_path(l, "deliveries.csv") == (dir / "deliveries.csv").string());
    // Neither: the path beside the lesson, for the error to name.
    CHECK(resolve_lesson_path(l, "no-such.gguf") == (dir / "no-such.gguf").string());
    std::filesystem::remove_all(dir);
}

TEST_CASE("an attention layer or head the model lacks is found before step 1, each at its key") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "sixstep-attention-shape";
    std::filesystem::create_directories(dir);
    const std::string lesson = (dir / "attention.yaml").string();
    std::ofstream(lesson) << "title: t\nmodel: {kind: llm, file: " << SIXSTEP_SOURCE_DIR
                          << "/assets/models/stories-3m-f16.gguf}\nsteps:\n"
                             "  - request: {prompt: \"The cat\"}\n    attention: {layer: 9, head: 0}\n"
                             "  - attention: {layer: 1, head: 12}\n  - attention: {layer: 3, head: 7}\n";
    try {
        (void)load_lesson(lesson);
        FAIL("loaded");
    } catch (const Error& e) {
        CHECK(e.where().line == 5);
        CHECK(e.message() == "attention: layer 9 does not exist: the model has layers 0..3\n" + lesson +
                                 ":6:16: attention: head 12 does not exist: the model has heads 0..7");
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("a forced token the vocabulary lacks is found before step 1, each at its force key") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "sixstep-forced-tokens";
    std::filesystem::create_directories(dir);
    const std::string lesson = (dir / "force.yaml").string();
    const auto write = [&](const std::string& forces) {
        std::ofstream(lesson) << "title: t\nmodel: {kind: llm, file: " << SIXSTEP_SOURCE_DIR
                              << "/assets/models/stories-3m-f16.gguf}\nsteps:\n"
                                 "  - request: {prompt: \"The cat sat on the\", max_tokens: 3}\n    run: output\n"
                              << forces;
    };
    // A piece one letter off, and an id past the 2,000 tokens: both used to
    // be found only when their step ran.
    write("    force: \" carpet\"\n  - force: 2000\n");
    try {
        (void)load_lesson(lesson);
        FAIL("loaded");
    } catch (const Error& e) {
        CHECK(e.where().line == 6);
        CHECK(e.where().column == 12);
        CHECK(e.message() == "force: no token of this vocabulary is exactly \" carpet\" \u2014 did you mean \" carrot\"?\n" +
                                 lesson + ":7:12: force: token 2000 does not exist: the vocabulary has tokens 0..1999");
    }
    // A word written without the space its token starts with: that one, not
    // the nearest spelling ("ug").
    write("    force: rug\n");
    try {
        (void)load_lesson(lesson);
        FAIL("loaded");
    } catch (const Error& e) {
        CHECK(e.message() == "force: no token of this vocabulary is exactly \"rug\" \u2014 did you mean \" rug\", with "
                             "the space that starts a word inside a text?");
    }
    // The vocabulary's own pieces and ids load.
    write("    force: \" rug\"\n  - force: 1999\n");
    CHECK_NOTHROW((void)load_lesson(lesson));
    std::filesystem::remove_all(dir);
}

TEST_CASE("a missing lesson file is a clear error") {
    CHECK_THROWS_WITH_AS(load_lesson("/nonexistent/lesson.yaml"), "/nonexistent/lesson.yaml: cannot open the lesson file: No such file or directory",
                         Error);
}

TEST_CASE("a full lesson parses into steps, settings and expectations") {
    const Lesson l = parse_lesson(R"(
title: "T"
language: zh
model:
  weights: {bias: 4, distance: 3, congestion: 10, express_lane: -2}
steps:
  - say: hi
    request: {distance: "2 km", congestion: 0, express_lane: 1}
    set: {normalize: false, mode: train, dropout: 0.25, seed: 3, minimum_minutes: 10, lang: en}
    run: forward
    knobs: [distance, mode]
    expect:
      forward.raw_output: 11
      respond.text: {contains: "min"}
      train.loss: {below: 2}
      served.distinct: {above: 1}
      load.bias: {value: 4, tol: 0.5}
      postprocess.text: "11"
  - train: {steps: 3, learning_rate: 0.01, from: zero}
    freeze: true
    serve: 5
    run: stage
)",
                                  "inline.yaml");
    CHECK(l.title == "T");
    CHECK(l.language == "zh");
    REQUIRE(l.model.weights.size() == 4);
    CHECK(l.model.weights[0] == std::pair<std::string, double>{"bias", 4});
    CHECK(l.model.weights[1] == std::pair<std::string, double>{"distance", 3});
    REQUIRE(l.steps.size() == 2);
    const LessonStep& s = l.steps[0];
    CHECK(s.where.line == 7);
    REQUIRE(s.request);
    CHECK(s.request->at(0).first == "distance");
    CHECK(s.request->at(0).second == "2 km");
    // set: in the order written, values as the model takes them.
    std::vector<std::pair<std::string, std::string>> set;
    for (const auto& c : s.set) set.emplace_back(c.name, c.value);
    CHECK(set == std::vector<std::pair<std::string, std::string>>{
                     {"normalize", "false"}, {"mode", "train"}, {"dropout", "0.25"}, {"seed", "3"},
                     {"minimum_minutes", "10"}, {"lang", "en"}});
    CHECK(s.set[1].where.line == 9);
    CHECK(s.run->kind == RunSpec::Kind::through);
    CHECK(s.run->through == Stage::forward);
    CHECK(s.knobs == std::vector<std::string>{"distance", "mode"});
    REQUIRE(s.expect.size() == 6);
    CHECK(s.expect[0].conditions.at(0).op == Condition::Op::equals);
    CHECK(std::get<double>(s.expect[0].conditions.at(0).operand.literal) == 11);
    CHECK(s.expect[1].conditions.at(0).op == Condition::Op::contains);
    CHECK(s.expect[2].conditions.at(0).op == Condition::Op::below);
    CHECK(s.expect[3].conditions.at(0).op == Condition::Op::above);
    CHECK(s.expect[4].conditions.at(0).op == Condition::Op::near);
    CHECK(s.expect[4].conditions.at(0).tolerance == 0.5);
    // A quoted "11" stays text; an unquoted 11 is a number.
    CHECK(std::get<std::string>(s.expect[5].conditions.at(0).operand.literal) == "11");
    const LessonStep& t = l.steps[1];
    CHECK(t.train->steps == 3);
    CHECK(*t.train->learning_rate == 0.01);
    CHECK(t.train->from_zero);
    CHECK(t.freeze);
    CHECK(t.serve->requests == 5);
    CHECK(t.run->kind == RunSpec::Kind::stage);
}

// YAML's folded style joins wrapped lines with a space; Chinese has none
// between characters. The description keeps the spaces that English and
// mixed text need, and loses the ones the folds put between characters.
TEST_CASE("lesson: a folded Chinese description loses the folds' spaces, keeps the others") {
    const Lesson l = parse_lesson("title: 测试\nlanguage: zh\ndescription: >\n  一个小型的模型，接着写\n"
                                  "  \"The cat sat on the\"。同时把结果存进\n  KV 缓存，每一步\n  都很快。\n"
                                  "model: {kind: delivery}\nsteps:\n  - say: 好。\n",
                                  "folded.yaml");
    CHECK(l.description == "一个小型的模型，接着写 \"The cat sat on the\"。同时把结果存进 KV 缓存，每一步都很快。\n");
    CHECK(join_cjk_folds("One line, then another.") == "One line, then another.");
    CHECK(join_cjk_folds("小 十倍 ，  两个空格") == "小十倍，  两个空格");  // one space only: two were written on purpose
    CHECK(join_cjk_folds("p99 延迟 与 TTFT") == "p99 延迟与 TTFT");
    CHECK(join_cjk_folds("\xff \xe4\xb8\x80") == "\xff \xe4\xb8\x80");  // not UTF-8 before the space: kept as it is
}

// What a bundled lesson says is read by the class, on a projector: no
// author's markup in it. Two narrations once showed "`model: url:`" and
// "(`sixstep coldstart` tries …)" with their backticks.
TEST_CASE("the bundled lessons' titles, descriptions and narration carry no markup") {
    const auto paths = find_lessons(std::string(SIXSTEP_SOURCE_DIR) + "/lessons");
    REQUIRE(paths.size() >= 30);
    for (const auto& path : paths) {
        const Lesson l = load_lesson(path);
        CAPTURE(path);
        CHECK(l.title.find('`') == std::string::npos);
        CHECK(l.description.find('`') == std::string::npos);
        for (const auto& step : l.steps) {
            CAPTURE(step.title);
            CHECK(step.title.find('`') == std::string::npos);
            CHECK(step.say.find('`') == std::string::npos);
        }
    }
}

// A bad value was let through only when the step that writes the request
// expects its error; a later step that runs the request and expects it was
// refused ("unit \"furlongs\" is not a length"), while a missing field was
// let through either way.
TEST_CASE("a bad value in a request is let through when a later step that runs it expects the error") {
    const std::string request = "title: t\nsteps:\n  - request: {distance: \"3 furlongs\", congestion: 0, express_lane: 0}\n";
    const std::string expecting = "  - say: next\n    run: all\n    expect:\n      error: {contains: \"unit\"}\n";
    CHECK_NOTHROW((void)parse_lesson(request + expecting, "later.yaml"));
    // Nobody expects it: refused where it is written.
    CHECK_THROWS_WITH_AS((void)parse_lesson(request + "  - run: all\n", "none.yaml"),
                         "none.yaml:3:25: distance: unit \"furlongs\" is not a length (use km, m or mi)", Error);
    // Another request in between: the step that expects an error runs that one.
    CHECK_THROWS_WITH_AS(
        (void)parse_lesson(request + "  - request: {distance: \"3 km\", congestion: 0, express_lane: 0}\n" + expecting,
                           "between.yaml"),
        "between.yaml:3:25: distance: unit \"furlongs\" is not a length (use km, m or mi)", Error);
}
