// What the serving model declares about itself: its knobs (which
// experiment, then each experiment's request fields), every path its stages
// emit, what each stage shows large, and what an experiment costs — the
// experiments' own parts gathered from their files (serving_lab.h).
// tests/serving/test_serving_model.cpp runs each experiment and checks that
// every path it emits is declared.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/core/stage.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/trace_keys.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

namespace {

using lab::path;

// The experiment to run, then each experiment's own knobs and paths
// (serving_lab.h), around the paths every experiment answers.
struct Declared {
    std::vector<Knob> knobs;
    std::vector<PathInfo> paths;
};

const Declared& declared() {
    static const Declared d = [] {
        using VT = ValueType;
        Declared x;
        std::vector<std::string> names;
        for (const LabEntry& e : lab_experiments()) names.emplace_back(e.name);
        x.knobs.push_back(lab::choice(keys::experiment, names,
                                      "what to run: a workload through the scheduler, a batch-size sweep, a queue, "
                                      "or one of the later experiments (serving_lab.h)"));
        x.paths.push_back({path(Stage::request, keys::experiment), VT::text, "",
                           fmt::format("the experiment: {} or {}",
                                       fmt::join(names.begin(), names.end() - 1, ", "), names.back())});
        // 2 load: the language model's load stage, as it emits it.
        const std::string load_prefix = path(Stage::load, "");
        for (const PathInfo& q : llm::LlmModel::describe().paths)
            if (q.path.rfind(load_prefix, 0) == 0 && q.path != path(Stage::load, sixstep::keys::ms) &&
                q.path != path(Stage::load, sixstep::keys::warnings) && q.path != path(Stage::load, sixstep::keys::cold) &&
                q.path != path(Stage::load, sixstep::keys::weights_checksum) &&
                q.path != path(Stage::load, sixstep::keys::checksum_ms))
                x.paths.push_back(q);
        for (PathInfo& q : x.paths)
            if (q.path == path(Stage::load, llm::keys::status))
                q.meaning += fmt::format("; \"{}\" without a model file (the canary brings its own)", nothing_to_load);
        x.paths.push_back({path(Stage::forward, keys::wall_ms), VT::number, "ms", "real time the experiment took"});
        for (const LabEntry& e : lab_experiments()) e.declare(x.knobs, x.paths);
        x.paths.push_back({path(Stage::respond, sixstep::keys::text), VT::text, "", "what the experiment showed, in words"});
        add_common_paths(x.paths);
        return x;
    }();
    return d;
}

std::vector<sixstep::Headline> headlines() {
    return {
        {Stage::request, {{keys::experiment}, {keys::compare}}},
        {Stage::load, {{llm::LlmModel::describe().headline(Stage::load)->fields.front()}}},
        // Each with a caption on its card: a bare "0.905×" or "no" said nothing of what it was;
        // a yes or no answers a question ("no" over "rolled back" read as "rolled back").
        // The queue's service time before the experiment's wall time: the
        // 156 ms a queue experiment took read as the time of one service.
        {Stage::forward,
         {{keys::service_ms, 3, false, "", "service time"}, {keys::wall_ms, 3, false, "", "real time"}},
         " \u00b7 ",
         true},
        {Stage::output,
         {{"ttft_p50_ms", 3, false, "", "median TTFT"}, {keys::knee, 6, false, "", "knee found?"},
          {keys::wait_at_utilization_ms, 3, false, "", "mean wait"}, {"types", 6, false, "", "weight types"},
          {"crossover_day", 3, false, "", "inference = training"}, {"warm_median_ms", 3, false, "", "warm request"},
          {"chat_ttft_ms", 3, false, "", "chat TTFT"}, {"rolled_back", 6, false, "", "rolled back?"},
          {"tokens_per_pass", 3, false, "", "tokens per pass"}}},
        // The ratios with "×": a bare "193" on the card read as a count.
        {Stage::postprocess,
         {{"ttft_p50_ratio", 3, false, "\u00d7", "TTFT vs baseline"},
          {keys::speedup_at_largest, 3, false, "\u00d7", "tokens/s vs batch 1"},
          {keys::wait_growth, 3, false, "\u00d7", "wait growth"}, {"q4_0_file_ratio", 3, false, "\u00d7", "Q4_0 file size"},
          {"greedy_identical", 6, false, "", "same text?"}, {"cached_over_warm", 3, false, "\u00d7", "cold vs warm"},
          {"inference_to_training", 3, false, "\u00d7", "inference vs training"},
          {"stream_over_reading", 3, false, "\u00d7", "vs reading"}, {"answered_percent", 3, false, "", "answered"}}},
        {Stage::respond, {{sixstep::keys::text}}},
    };
}

// Every experiment runs in the forward stage, once per request, and says
// what it costs at its most (its file's <name>_lab_work).
WorkDeclaration work() {
    WorkDeclaration w;
    w.charge = WorkDeclaration::Charge::at_stage;
    w.stage = Stage::forward;
    w.whole = [](const FieldLookup& field) {
        const LabEntry* e = find_lab_experiment(field(keys::experiment));
        return e ? e->work(field) : Work{};  // no such experiment: its knob refuses the request before any work
    };
    return w;
}

}  // namespace

const ModelDescription& ServingModel::describe() {
    static const ModelDescription d{"serving", "serving experiments on a GGUF model: batching, traffic, queueing",
                                    declared().knobs, declared().paths, headlines(), /*trains=*/false, /*panels=*/{},
                                    work(), /*check_request_value=*/{}, /*in_path_unit=*/{}};
    return d;
}

}  // namespace sixstep::serving
