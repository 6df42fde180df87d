// The serving lab's experiments (lessons 08–16), each one concept in its own
// file behind the serving model's six stages (serving_model.cpp). Each
// experiment only calls an engine that already exists and publishes what it
// measured as declared paths:
//
//   traffic       lab_traffic.cpp       a workload through the scheduler on the virtual clock
//                                       (serving/traffic.h), with `compare` against one change
//   batch_sweep   lab_batch_sweep.cpp   decode tokens/s and TPOT per batch size, the knee
//                                       (serving/batch_sweep.h)
//   queue         lab_queue.cpp         waiting time vs utilization, service times measured
//                                       (serving/queue_curve.h)
//   quantization  lab_quantization.cpp  the model as it is, Q8_0 and Q4_0 (tools/quantize.h),
//                                       each timed decoding (tools/bench.h) and scored on the
//                                       held-out stories (tools/perplexity.h)
//   speculative   lab_speculative.cpp   a draft model proposes, the target verifies, per k
//                                       (serving/speculative.h)
//   cold_start    lab_cold_start.cpp    a fresh instance against a warm one, and keep-warm
//                                       against scale-to-zero (tools/cold_start.h)
//   bill          lab_bill.cpp          6·N·D against 2·N per token over the model's life
//                                       (serving/bill.h), decode rate measured here
//   waits         lab_waits.cpp         chat, agent, batch job: what each user waits for
//                                       (serving/user_wait.h)
//   canary        lab_canary.cpp        inference vs serving vs deployment with the
//                                       delivery model (serving/canary.h)
//
// Stage by stage: read (1, the request's fields, checked by their knobs),
// run (3, the measurement; the result goes into the exhibit for the
// window), output (4, what it measured), compare (5, the relations a lesson
// claims — ratios that hold on any machine — and the answer in words).
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/model_description.h"
#include "pipeline/core/model.h"
#include "pipeline/core/trace.h"

namespace sixstep::serving {

class ServingModel;
struct ServingExhibit;

// The request's fields, each checked by the serving model's knob of that
// name; a field not given takes the knob's default. It notes each name an
// experiment asks for: what its read() asks for is what it uses
// (lab_experiments_reading).
class LabFields {
public:
    LabFields() = default;
    explicit LabFields(const Request& r);
    std::string text(const char* name) const;
    double number(const char* name) const { return std::stod(text(name)); }
    int whole(const char* name) const { return static_cast<int>(number(name)); }
    bool on(const char* name) const;
    bool given(const char* name) const { return values_.count(name) > 0; }
    const std::set<std::string, std::less<>>& asked() const { return asked_; }

private:
    std::map<std::string, std::string, std::less<>> values_;
    mutable std::set<std::string, std::less<>> asked_;
};

// Reads a request as the experiment it names would at stage 1, and throws
// sixstep::Error for what it would refuse there: fields each valid alone
// and not together ("min_tokens" above "max_tokens"). Reading is cheap and
// runs nothing; the lesson loader asks it before step 1.
void check_lab_request(const Request& r);

// "1,2,4" → {1, 2, 4}: each a number (ascending unless told otherwise);
// throws sixstep::Error naming `name`.
std::vector<double> number_list(const std::string& text, const char* name, bool ascending = true);
std::string yes_no(bool b);

class LabExperiment {
public:
    virtual ~LabExperiment() = default;
    virtual void read(const LabFields& f, TraceEvent& ev) = 0;                       // 1 request
    virtual void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) = 0;   // 3 forward
    virtual void output(const ServingExhibit& ex, TraceEvent& ev) = 0;               // 4 output
    virtual std::string compare(const ServingExhibit& ex, TraceEvent& ev) = 0;       // 5 postprocess: the answer
};

// One experiment: the name a request gives in `experiment`, its knobs and
// paths (added to the serving model's description), the most work it may
// cost from the request's fields alone (the serving model's
// WorkDeclaration, added to a lesson's budget before it runs: token
// positions are counted on both models of a pair — target and draft,
// original and quantized —; loading or rewriting a file is not), and a
// fresh instance for each request.
struct LabEntry {
    const char* name;
    bool runs_on_model;  // on the serving model's language model (all but the canary, which brings its own)
    void (*declare)(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
    Work (*work)(const FieldLookup& field);
    std::unique_ptr<LabExperiment> (*make)();
};
// Every experiment, in the order the `experiment` knob lists them (the
// first is its default).
const std::vector<LabEntry>& lab_experiments();
// The entry of that name, or null; lab_experiment throws sixstep::Error
// for a name no experiment has.
const LabEntry* find_lab_experiment(std::string_view name);
const LabEntry& lab_experiment(std::string_view name);
// The experiments that declare `path` ("postprocess.q4_0_file_ratio" →
// {"quantization"}); empty for a path every experiment answers (load.*,
// respond.text) or none does.
std::vector<std::string> lab_experiments_emitting(std::string_view path);
// The values of the traffic experiment's `compare` under which it answers
// `path` (postprocess.ttft_p50_ratio → policy, prefix_cache, kv_layout:
// the figures of its baseline run); empty for a path it answers without
// one, or never.
std::vector<std::string> traffic_compares_answering(std::string_view path);
// The experiments that read request field `field` ("batch_sizes" →
// {"batch_sweep"}, "context" → {"batch_sweep", "queue"}): those whose read()
// asks for it, every field it uses, each time (a field asked for only under
// another's value would be missed here). Empty for a field no experiment
// reads itself (`experiment`, which the serving model reads).
std::vector<std::string> lab_experiments_reading(std::string_view field);
// The speculative experiment's draft model file: `draft` beside the target's
// file (a lesson names it by its file name), else the bundled model of that
// name (a lesson that copied only its target into a folder of its own).
// `target_dir` empty: a random-weight target, bundled drafts only. Throws
// sixstep::Error naming where it looked and the bundled models. The lesson
// loader asks it before step 1.
std::filesystem::path speculative_draft_file(const std::filesystem::path& target_dir, const std::string& draft);
// The request field naming it.
inline constexpr char draft_field[] = "draft";
// The request field that runs the draft on a thread of the target's CPU
// pool, overlapped with the target's passes.
inline constexpr char spec_overlap_field[] = "spec_overlap";

// The longest held-out story (assets/data/heldout-stories.txt), in bytes,
// the quantization's work counts with: the shipped ones hold at most 505,
// and tests/serving checks every one against it.
inline constexpr long long heldout_story_bytes_at_most = 1024;

// Declaration helpers, shared by every experiment's declaration.
namespace lab {
// The decode-rate knob the bill and the quantization lab share (declared by
// the bill): tokens per timed run; each rate is the median of
// bench_repetitions timed runs after one warm-up.
inline constexpr char bench_tokens[] = "bench_tokens";
inline constexpr int bench_repetitions = 3;

Knob knob(const char* name, KnobType type, std::string default_value, const char* meaning);
Knob whole(const char* name, double lo, double hi, int default_value, const char* unit, const char* meaning);
Knob number(const char* name, double lo, double hi, double default_value, const char* unit, const char* meaning);
Knob choice(const char* name, std::vector<std::string> choices, const char* meaning);
std::string path(Stage s, const char* key);
// For work declarations: a whole-number field as its knob took it.
long long whole_field(const FieldLookup& field, const char* name);
// "1,2,4" → {1, 2, 4}, leniently: what does not read as a whole number from
// 1 to 1e9 is left out (the experiment refuses it before any pass runs).
std::vector<long long> whole_numbers(const std::string& text);
// Items of a comma-separated list, empty ones included.
long long list_length(std::string_view text);
}  // namespace lab

// One declaration, one work bound and one factory per experiment file.
void declare_traffic_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_batch_sweep_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_queue_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_quantization_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_speculative_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_cold_start_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_bill_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_waits_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
void declare_canary_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths);
Work traffic_lab_work(const FieldLookup& field);
Work batch_sweep_lab_work(const FieldLookup& field);
Work queue_lab_work(const FieldLookup& field);
Work quantization_lab_work(const FieldLookup& field);
Work speculative_lab_work(const FieldLookup& field);
Work cold_start_lab_work(const FieldLookup& field);
Work bill_lab_work(const FieldLookup& field);
Work waits_lab_work(const FieldLookup& field);
Work canary_lab_work(const FieldLookup& field);
std::unique_ptr<LabExperiment> make_traffic_lab();
std::unique_ptr<LabExperiment> make_batch_sweep_lab();
std::unique_ptr<LabExperiment> make_queue_lab();
std::unique_ptr<LabExperiment> make_quantization_lab();
std::unique_ptr<LabExperiment> make_speculative_lab();
std::unique_ptr<LabExperiment> make_cold_start_lab();
std::unique_ptr<LabExperiment> make_bill_lab();
std::unique_ptr<LabExperiment> make_waits_lab();
std::unique_ptr<LabExperiment> make_canary_lab();

}  // namespace sixstep::serving
