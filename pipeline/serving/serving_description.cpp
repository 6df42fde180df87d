// What the serving model declares about itself: its knobs (the request
// fields of its three experiments), every path its stages emit, what each
// stage shows large, and what an experiment costs.
// tests/serving/test_serving_model.cpp runs each experiment and checks that
// every path it emits is declared here.
#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/stage.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/queue_sim.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/serving/workload.h"

namespace sixstep::serving {

namespace {

using lab::path;
using lab::whole;
using lab::choice;
Knob make_knob(const char* name, KnobType type, std::string default_value, const char* meaning) {
    return lab::knob(name, type, std::move(default_value), meaning);
}

std::vector<Knob> knobs() {
    const BatchSweepParams sweep;
    const TrafficParams traffic;
    std::vector<Knob> out;
    out.push_back(choice(keys::experiment, {"traffic", "batch_sweep", "queue", "quantization", "speculative", "cold_start", "bill", "waits", "canary"},
                         "what to run: a workload through the scheduler, a batch-size sweep, a queue, or one of the "
                         "later experiments (serving_lab.h)"));
    // batch_sweep
    out.push_back(make_knob(keys::batch_sizes, KnobType::text, "1,2,4,8,16,32",
                            "batch_sweep: sequences per decode step, ascending, comma-separated"));
    out.push_back(whole(keys::context, 1, 4096, 32, "tokens",
                        "batch_sweep, queue: tokens each sequence holds before the timed steps"));
    out.push_back(whole(keys::steps, 1, 4096, 8, "", "batch_sweep: timed decode steps per run"));
    out.push_back(whole(keys::repetitions, 1, 100, sweep.repetitions, "", "batch_sweep: runs per batch size (the median is kept)"));
    // traffic
    out.push_back(choice(keys::policy, {"continuous", "static"},
                         "traffic: continuous (join and leave every step) or static batching (a batch ends with its "
                         "longest request)"));
    out.push_back(choice(keys::compare, {"none", "policy", "prefix_cache", "kv_layout"},
                         "traffic: run the same arrivals again with the other policy, the prefix cache the other "
                         "way, or the other KV layout"));
    out.push_back(whole(keys::requests, 1, 10000, 32, "", "traffic: requests in the workload"));
    Knob rate = make_knob(keys::rate, KnobType::number, "50", "traffic: mean arrivals per second (Poisson), virtual time");
    rate.min = min_arrival_rate, rate.max = 1e6, rate.unit = "req/s";
    rate.slider_min = 1, rate.slider_max = 500;
    out.push_back(rate);
    Knob batch = whole(keys::max_batch, 1, 1024, traffic.scheduler.max_batch, "", "traffic: most requests running at once");
    batch.slider_min = 1, batch.slider_max = 64;
    out.push_back(batch);
    out.push_back(whole(keys::kv_blocks, 1, max_kv_blocks, traffic.kv_blocks, "", "traffic: blocks in the KV pool"));
    out.push_back(whole(keys::block_size, 1, llm::max_block_size, traffic.block_size, "tokens", "traffic: positions per KV block"));
    out.push_back(whole(keys::step_tokens, 1, 1 << 20, traffic.scheduler.max_step_tokens, "tokens",
                        "traffic, continuous: most tokens one forward pass reads"));
    Knob cache = make_knob(keys::prefix_cache, KnobType::boolean, "false",
                           "traffic: reuse KV blocks of identical prompt prefixes (paged only)");
    out.push_back(cache);
    out.push_back(choice(keys::kv_layout, {"paged", "contiguous"},
                         "traffic: KV blocks taken as a request grows, or its whole maximum length reserved up front"));
    out.push_back(whole(keys::shared_prefix, 0, 4096, 0, "tokens",
                        "traffic: tokens of a built-in system prompt in front of every prompt (0: none)"));
    out.push_back(whole(keys::max_tokens, 1, 4096, 16, "tokens", "traffic: most tokens a request generates"));
    out.push_back(whole(keys::min_tokens, 0, 4096, 0, "tokens", "traffic: fewest drawn (0: max_tokens / 4)"));
    out.push_back(whole(keys::seed, 0, 2147483647, 1, "", "traffic: seed of the arrivals, prompts and lengths"));
    // queue
    Knob u = make_knob(keys::utilization, KnobType::number, "0.9",
                       "queue: the load to look at, arrival rate × mean service time");
    u.min = min_utilization, u.max = 1, u.max_exclusive = true;
    u.slider_min = 0.05, u.slider_max = 0.99;
    out.push_back(u);
    out.push_back(make_knob(keys::utilizations, KnobType::text, "0.1,0.3,0.5,0.7,0.8,0.9,0.95",
                            "queue: the curve's utilizations, ascending, each strictly between 0 and 1"));
    out.push_back(whole(keys::samples, 1, 10000, 32, "", "queue: decode steps timed for the service-time distribution"));
    out.push_back(whole(keys::sim_requests, 1000, 10'000'000, 20000, "", "queue: requests simulated per point at least"));
    return out;
}

// The three first experiments' paths, then the later experiments' knobs and
// paths, then the paths every experiment answers.
struct Declared {
    std::vector<Knob> knobs;
    std::vector<PathInfo> paths;
};
std::vector<PathInfo> paths();
const Declared& declared() {
    static const Declared d = [] {
        Declared x{knobs(), paths()};
        declare_lab(x.knobs, x.paths);
        add_common_paths(x.paths);
        return x;
    }();
    return d;
}

std::vector<PathInfo> paths() {
    using VT = ValueType;
    const Stage rq = Stage::request, fw = Stage::forward, op = Stage::output, pp = Stage::postprocess,
                rs = Stage::respond;
    std::vector<PathInfo> p = {
        {path(rq, keys::experiment), VT::text, "", "the experiment: traffic, batch_sweep, queue, quantization, speculative, cold_start, bill, waits or canary"},
        {path(rq, keys::batch_sizes), VT::numbers, "", "batch_sweep: the batch sizes"},
        {path(rq, keys::requests), VT::number, "", "traffic: requests in the workload"},
        {path(rq, keys::rate), VT::number, "req/s", "traffic: mean arrival rate"},
        {path(rq, keys::policy), VT::text, "", "traffic: the batching policy"},
        {path(rq, keys::compare), VT::text, "", "traffic: what the baseline changes (none: no baseline)"},
        {path(rq, keys::baseline), VT::text, "", "traffic with compare: the baseline's setting (\"static\", …)"},
        {path(rq, keys::shared_prefix), VT::number, "tokens", "traffic: shared system-prompt tokens"},
        {path(rq, keys::utilizations), VT::numbers, "", "queue: the curve's utilizations"},
        {path(rq, keys::utilization), VT::number, "", "queue: the utilization looked at"},
    };
    // 2 load: the language model's load stage, as it emits it.
    const std::string load_prefix = path(Stage::load, "");
    for (const PathInfo& q : llm::LlmModel::describe().paths)
        if (q.path.rfind(load_prefix, 0) == 0 && q.path != path(Stage::load, sixstep::keys::ms) &&
            q.path != path(Stage::load, sixstep::keys::warnings) && q.path != path(Stage::load, sixstep::keys::cold) &&
            q.path != path(Stage::load, sixstep::keys::weights_checksum) &&
            q.path != path(Stage::load, sixstep::keys::checksum_ms))
            p.push_back(q);
    const std::vector<PathInfo> more = {
        // 3 forward
        {path(fw, keys::wall_ms), VT::number, "ms", "real time the experiment took"},
        {path(fw, keys::passes), VT::number, "", "traffic: forward passes run, baseline included"},
        {path(fw, keys::engine_ms), VT::number, "ms", "traffic: engine time of those passes (forward + sampling), measured"},
        {path(fw, keys::virtual_s), VT::number, "s", "traffic: virtual time of the run, first arrival to last token"},
        {path(fw, keys::service_ms), VT::number, "ms", "queue: mean measured decode step (the service time)"},
        {path(fw, keys::service_scv), VT::number, "", "queue: its squared coefficient of variation c²"},
        // 4 output: batch sweep
        {path(op, keys::batch_sizes), VT::numbers, "", "batch_sweep: batch sizes, ascending"},
        {path(op, keys::tokens_per_s), VT::numbers, "tok/s", "batch_sweep: decode tokens/s at each batch size"},
        {path(op, keys::step_ms), VT::numbers, "ms", "batch_sweep: one decode step (= TPOT) at each batch size"},
        {path(op, keys::speedup), VT::numbers, "", "batch_sweep: tokens/s ÷ tokens/s at the first batch size"},
        {path(op, keys::tpot_ratio), VT::numbers, "", "batch_sweep: step time ÷ step time at the first batch size"},
        {path(op, keys::knee), VT::text, "", "batch_sweep: \"yes\" when the two-line fit accepts a knee"},
        {path(op, keys::knee_batch), VT::number, "", "batch_sweep: the knee's batch size (0: none)"},
        {path(op, keys::knee_verdict), VT::text, "", "batch_sweep: the knee, or why there is none, in words"},
        {path(op, keys::weight_bytes), VT::number, "B", "batch_sweep: weight bytes read per decode step (any batch size)"},
        {path(op, keys::kv_bytes), VT::numbers, "B",
         "batch_sweep: KV cache bytes read per decode step at each batch size: sequences × mean context × KV bytes per "
         "position"},
        // 4 output: queue
        {path(op, keys::utilizations), VT::numbers, "", "queue: utilizations, ascending"},
        {path(op, keys::wait_md1_sim_ms), VT::numbers, "ms", "queue: mean wait simulated with every service = the mean (M/D/1)"},
        {path(op, keys::wait_md1_ms), VT::numbers, "ms", "queue: M/D/1 formula ρ/(2μ(1−ρ))"},
        {path(op, keys::wait_mm1_sim_ms), VT::numbers, "ms", "queue: mean wait simulated with exponential service (M/M/1)"},
        {path(op, keys::wait_mm1_ms), VT::numbers, "ms", "queue: M/M/1 formula ρ/(μ(1−ρ))"},
        {path(op, keys::wait_measured_sim_ms), VT::numbers, "ms", "queue: mean wait simulated with the measured service times"},
        {path(op, keys::wait_measured_ms), VT::numbers, "ms", "queue: Pollaczek–Khinchine with the measured c²"},
        {path(op, keys::wait_at_utilization_ms), VT::number, "ms",
         "queue: mean wait simulated at request.utilization with the measured service times"},
        {path(op, keys::formula_at_utilization_ms), VT::number, "ms", "queue: Pollaczek–Khinchine there"},
        {path(op, keys::wait_at_utilization_services), VT::number, "",
         "queue: that wait in mean service times (the same on any machine)"},
    };
    p.insert(p.end(), more.begin(), more.end());
    // 4 output and 5 postprocess: traffic figures
    for (const TrafficFigure& f : traffic_figures()) {
        p.push_back({path(op, f.key), VT::number, f.unit, fmt::format("traffic: {}", f.meaning)});
        p.push_back({path(op, (std::string(keys::baseline_prefix) + f.key).c_str()), VT::number, f.unit,
                     fmt::format("traffic with compare, the baseline: {}", f.meaning)});
        if (f.ratio)
            p.push_back({path(pp, f.ratio), VT::number, "",
                         fmt::format("traffic with compare: {} of this run ÷ of the baseline", f.key)});
    }
    p.push_back({path(pp, "outputs_identical"), VT::text, "",
                 "traffic with compare: \"yes\" when every request generated the same tokens in both runs, else "
                 "\"n of m differ\""});
    const std::vector<PathInfo> last = {
        // 5 postprocess: batch sweep and queue
        {path(pp, keys::largest_batch), VT::number, "", "batch_sweep: the largest batch size"},
        {path(pp, keys::speedup_at_largest), VT::number, "", "batch_sweep: tokens/s there ÷ at the first batch size"},
        {path(pp, keys::tpot_ratio_at_largest), VT::number, "", "batch_sweep: step time there ÷ at the first batch size"},
        {path(pp, keys::kv_to_weights_at_largest), VT::number, "",
         "batch_sweep: KV cache bytes read per step at the largest batch ÷ the weight bytes"},
        {path(pp, keys::gain_per_doubling_first_quarter), VT::number, "",
         "batch_sweep: tokens/s gained per doubling of the batch over the first quarter of the sizes (with 8 sizes, "
         "the first to the third; 0 with under 3 sizes)"},
        {path(pp, keys::gain_per_doubling_last_quarter), VT::number, "",
         "batch_sweep: the same over the last quarter (with 8 sizes, the sixth to the largest)"},
        {path(pp, keys::wait_growth), VT::number, "", "queue: simulated M/D/1 wait at the highest utilization ÷ at the lowest"},
        {path(pp, keys::waits_rising), VT::text, "", "queue: \"yes\" when every simulated wait exceeds the one before"},
        {path(pp, keys::max_z), VT::number, "",
         "queue: largest |simulated − formula| ÷ standard error, over every point, M/D/1 and M/M/1"},
        {path(pp, keys::headroom_utilization), VT::number, "",
         "queue: highest utilization keeping the mean wait within one service time (measured c²)"},
        // 6 respond
        {path(rs, sixstep::keys::text), VT::text, "", "what the experiment showed, in words"},
    };
    p.insert(p.end(), last.begin(), last.end());
    return p;
}

std::vector<sixstep::Headline> headlines() {
    return {
        {Stage::request, {{keys::experiment}, {keys::compare}}},
        {Stage::load, {{llm::LlmModel::describe().headline(Stage::load)->fields.front()}}},
        // Each with a caption on its card: a bare "0.905×" or "no" said nothing of what it was.
        {Stage::forward, {{keys::wall_ms, 3, false, "", "real time"}}},
        {Stage::output,
         {{"ttft_p50_ms", 3, false, "", "median TTFT"}, {keys::knee, 6, false, "", "knee found"},
          {keys::wait_at_utilization_ms, 3, false, "", "mean wait"}, {"types", 6, false, "", "weight types"},
          {"crossover_day", 3, false, "", "inference = training"}, {"warm_median_ms", 3, false, "", "warm request"},
          {"chat_ttft_ms", 3, false, "", "chat TTFT"}, {"rolled_back", 6, false, "", "rolled back"},
          {"tokens_per_pass", 3, false, "", "tokens per pass"}}},
        // The ratios with "×": a bare "193" on the card read as a count.
        {Stage::postprocess,
         {{"ttft_p50_ratio", 3, false, "\u00d7", "TTFT vs baseline"},
          {keys::speedup_at_largest, 3, false, "\u00d7", "tokens/s vs batch 1"},
          {keys::wait_growth, 3, false, "\u00d7", "wait growth"}, {"q4_0_file_ratio", 3, false, "\u00d7", "Q4_0 file size"},
          {"greedy_identical", 6, false, "", "same text"}, {"cached_over_warm", 3, false, "\u00d7", "cold vs warm"},
          {"inference_to_training", 3, false, "\u00d7", "inference vs training"},
          {"stream_over_reading", 3, false, "\u00d7", "vs reading"}, {"answered_share", 3, false, "", "answered"}}},
        {Stage::respond, {{sixstep::keys::text}}},
    };
}

// Every experiment runs in the forward stage, once per request. Counted at
// its most: the batch sweep prefills its largest batch once, then per batch
// size one warm-up step and repetitions × steps timed ones; traffic prefills
// and generates every request to its max_tokens, in both arms of a
// comparison (a preempted request's recompute is not counted: the pool's
// size bounds how often that happens, not the lesson); the queue times
// samples + 1 decode steps after its context, and simulates three service
// laws per utilization plus the one looked at. The labs of serving_lab.h
// (quantization, speculative decoding, …) declare their own (lab_work).
WorkDeclaration work() {
    WorkDeclaration w;
    w.charge = WorkDeclaration::Charge::at_stage;
    w.stage = Stage::forward;
    w.whole = [](const FieldLookup& field) {
        auto whole = [&](const char* name) { return lab::whole_field(field, name); };
        Work x;
        const std::string experiment = field(keys::experiment);
        if (experiment == "batch_sweep") {
            const std::vector<long long> sizes = lab::whole_numbers(field(keys::batch_sizes));
            long long largest = 0, sum = 0;
            for (long long b : sizes) largest = std::max(largest, b), sum += b;
            x.forward_tokens = largest * whole(keys::context) + sum * (1 + whole(keys::repetitions) * whole(keys::steps));
        } else if (experiment == "queue") {
            x.forward_tokens = whole(keys::context) + whole(keys::samples) + 1;
            const std::string u = field(keys::utilizations);
            x.simulations = 3 * lab::list_length(u) + 1;
        } else if (experiment == "traffic") {
            long long opening = 0;
            for (const std::string& o : story_openings()) opening = std::max(opening, llm::encoded_tokens_at_most(o));
            const long long prompt = whole(keys::shared_prefix) + opening;
            const long long arms = field(keys::compare) == "none" ? 1 : 2;
            x.forward_tokens = arms * whole(keys::requests) * (prompt + whole(keys::max_tokens));
        } else {
            x = lab_work(experiment, field);
        }
        return x;
    };
    return w;
}

}  // namespace

const ModelDescription& ServingModel::describe() {
    static const ModelDescription d{"serving", "serving experiments on a GGUF model: batching, traffic, queueing",
                                    declared().knobs, declared().paths, headlines(), /*trains=*/false, /*panels=*/{},
                                    work()};
    return d;
}

}  // namespace sixstep::serving
