// ServingModel: the serving lab behind the six-stage Model interface, so a
// lesson runs a serving experiment the way it runs one request — and checks
// what it measured with `expect` — without the interpreter knowing any of it.
//
// The weights are a GGUF model (an LlmModel inside, which loads them); a
// request names an experiment and its settings, and the six stages are:
//
//   1 request      read the experiment and its settings (each checked against its knob)
//   2 load         map the GGUF once (the LlmModel's load stage, same fields)
//   3 forward      run it: every forward pass of the experiment, on the engine
//   4 output       what it measured: curves, percentiles, counts
//   5 postprocess  the comparisons a lesson claims: ratios and relations that
//                  hold on any machine (batch 32 ÷ batch 1, continuous ÷ static)
//   6 respond      one paragraph that says it in words
//
// Experiments, one file each (serving_lab.h):
//   traffic       a workload through the scheduler on the virtual clock (traffic.h);
//                 with `compare`, the same arrivals again with one thing changed
//                 (the other policy, prefix cache the other way, the other KV
//                 layout): output.baseline_<figure> and postprocess.<figure>_ratio
//                 = this run ÷ the baseline
//   batch_sweep   decode tokens/s and TPOT per batch size, the knee (batch_sweep.h)
//   queue         waiting time vs utilization, service times measured on the
//                 engine, beside M/D/1, M/M/1 and Pollaczek–Khinchine (queue_curve.h)
//   quantization, speculative, cold_start, bill, waits, canary
//
// The full results (every point, every request's timeline, the KV pool at its
// fullest) are the model's exhibit (ServingExhibit) for the window's panels.
//
//     ServingModel m({.file = "assets/models/stories-3m-f16.gguf"});
//     Request r;  r.set("experiment", "traffic");  r.set("compare", "policy");
//     Pipeline p(m, r);  p.run();
//     p.trace().lookup("postprocess.ttft_p50_ratio");   // continuous ÷ static
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/core/model.h"
#include "pipeline/llm/backend_kind.h"
#include "pipeline/serving/batch_sweep.h"
#include "pipeline/serving/bill.h"
#include "pipeline/serving/canary.h"
#include "pipeline/serving/queue_curve.h"
#include "pipeline/serving/speculative.h"
#include "pipeline/serving/traffic.h"
#include "pipeline/serving/user_wait.h"
#include "pipeline/tools/cold_start.h"

namespace sixstep::llm {
class LlmModel;
}

namespace sixstep::serving {

struct ServingModelParams {
    std::filesystem::path file;  // the GGUF model; empty: none, for the experiments that bring their own (canary)
    int n_threads = 0;           // CPU threads; <= 0 → the CPU backend's default
    // Where the experiments' forward passes run, and the backends they make
    // of their own: quantized copies, a speculative draft, cold-start instances.
    llm::BackendKind backend = llm::BackendKind::cpu;
};

// One figure of a traffic run that a lesson can expect on: output.<key>, and
// with a comparison output.baseline_<key> and postprocess.<ratio> (when it has one).
struct TrafficFigure {
    const char* key;      // "ttft_p50_ms"
    const char* unit;     // "ms"
    const char* meaning;  // one line
    const char* ratio;    // "ttft_p50_ratio": this run ÷ the baseline; null: no ratio
    double (*get)(const TrafficReport&);
    bool needs_target = false;  // goodput: only when a TTFT or TPOT target is set (the report has it then)
    // Whether a report has a value for it; null: every report has. TPOT
    // needs a request with a second token.
    bool (*measured_in)(const TrafficReport&) = nullptr;
    bool measured(const TrafficReport& r) const { return !measured_in || measured_in(r); }
};
const std::vector<TrafficFigure>& traffic_figures();

// Everything an experiment measured, for panels.
// The quantization experiment: one row per weight type.
struct QuantizationRow {
    std::string type;              // "F16", "Q8_0", "Q4_0"
    double file_bytes = 0;         // the whole GGUF file
    double step_bytes = 0;         // weight bytes one decode step reads (decode_weight_bytes, llama_model.h)
    double decode_tok_s = 0;       // measured, one stream, median of the runs
    double predicted_tok_s = 0;    // the first row's rate × its step bytes ÷ these: the prediction from bytes alone
    double perplexity = 0;         // on the held-out stories
    double kl_mean = 0;            // mean KL(first row ‖ this) per position, nats (0 for the first row)
    double max_logit_diff = 0;     // largest |logit − first row's logit|
    double top1_agreement = 0;     // share of positions picking the first row's most likely token
};

struct ServingExhibit : Exhibit {
    std::string experiment;                // "traffic", "batch_sweep", "queue", "quantization", …
    std::optional<BatchSweepResult> sweep;
    std::optional<TrafficRun> run;         // traffic: the run as asked
    std::optional<TrafficRun> baseline;    // traffic with compare: the other arm
    std::string run_label, baseline_label;  // "continuous" / "static", "prefix cache on" / "off", …
    std::string compare;                   // traffic: what the two arms differ in ("policy", "prefix_cache",
                                           // "kv_layout"), "" without a baseline
    // traffic: the comparison changes KV memory (its layout, the prefix
    // cache): the block map shows it better than the timeline
    bool about_memory() const { return compare == "prefix_cache" || compare == "kv_layout"; }
    std::optional<QueueCurve> queue;
    double utilization = 0;                // queue: the utilization the lesson (or the slider) picked
    QueueSimResult at_utilization;         // queue: measured service times simulated there (M/G/1)
    std::vector<QuantizationRow> quantization;  // quantization: the model's own type first
    std::vector<SweepRow> speculative;     // speculative: one row per k (and temperature)
    std::optional<llm::ColdStartResult> cold_start;
    std::optional<BillResult> bill;
    std::optional<UserWaits> waits;
    std::optional<CanaryResult> canary;
};

// load.status of a serving model made without a file.
inline constexpr char nothing_to_load[] = "nothing to load";

class ServingModel : public sixstep::Model {
public:
    explicit ServingModel(ServingModelParams params);
    ~ServingModel() override;

    std::string name() const override;
    bool loaded() const override;
    void load(TraceEvent& ev) override;
    std::uint64_t weights_checksum() const override;
    bool has_weights() const override { return llm_ != nullptr; }
    std::unique_ptr<Job> start(const Request& request) override;
    const ModelDescription& description() const override { return describe(); }
    std::shared_ptr<const Exhibit> exhibit() const override { return exhibit_; }

    // Knobs (the request fields of every experiment), paths and headlines
    // (serving_description.cpp). No settings: everything is per request.
    static const ModelDescription& describe();

    // The language model the experiments run on; throws sixstep::Error
    // when the serving model was made without a file.
    llm::LlmModel& llm();
    bool has_llm() const { return llm_ != nullptr; }
    void set_exhibit(std::shared_ptr<const ServingExhibit> e) { exhibit_ = std::move(e); }

private:
    std::unique_ptr<llm::LlmModel> llm_;
    std::shared_ptr<const ServingExhibit> exhibit_;
};

}  // namespace sixstep::serving
