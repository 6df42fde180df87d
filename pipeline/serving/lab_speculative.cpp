// The serving lab's speculative decoding (lesson 13): the loaded model is the
// target, a draft file beside it proposes; for every k (and temperature) the
// same request runs speculatively and with the target alone
// (serving/speculative.h sweep_speculative), greedy rows checked token for
// token against the target's own text. With spec_overlap, the draft runs
// ahead on a thread of its own and lends it to the target between its
// passes (SpeculativeParams::overlap): the target then runs on a second CPU
// backend of the same weights with a place kept for that thread, and the
// target alone on the model's own backend, so both use as many threads.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/core/data_dir.h"
#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"

namespace sixstep::serving {

namespace {

constexpr const char* draft = draft_field;
constexpr char draft_ks[] = "draft_ks";
constexpr char temperatures[] = "temperatures";
constexpr char spec_tokens[] = "spec_tokens";
constexpr char spec_repetitions[] = "spec_repetitions";
constexpr char spec_prompt[] = "spec_prompt";
constexpr const char* spec_overlap = spec_overlap_field;

// "1,2,4" → draft lengths, ascending; throws sixstep::Error.
std::vector<int> draft_ks_of(const std::string& text) {
    std::vector<int> out;
    for (double k : number_list(text, draft_ks)) {
        if (k != std::floor(k) || k < 1 || k > max_draft_tokens)
            throw Error(fmt::format("\"{}\": {} is not a draft length (whole, 1 to {})", draft_ks,
                                    format_value(Value{k}), max_draft_tokens));
        out.push_back(static_cast<int>(k));
    }
    return out;
}

// "0,0.8" → temperatures, ascending; throws sixstep::Error.
std::vector<float> temperatures_of(const std::string& text) {
    std::vector<float> out;
    for (double t : number_list(text, temperatures)) {
        if (t < 0 || t > 100) throw Error(fmt::format("\"{}\": {} is not a temperature (0 to 100)", temperatures, t));
        out.push_back(static_cast<float>(t));
    }
    return out;
}

std::vector<double> column(const std::vector<SweepRow>& rows, double SweepRow::*field) {
    std::vector<double> out;
    for (const SweepRow& r : rows) out.push_back(r.*field);
    return out;
}

}  // namespace

std::filesystem::path speculative_draft_file(const std::filesystem::path& target_dir, const std::string& draft_name) {
    std::error_code ec;
    if (!target_dir.empty()) {
        const std::filesystem::path beside = target_dir / draft_name;
        if (std::filesystem::exists(beside, ec)) return beside;
    }
    const std::filesystem::path bundled = bundled_file(draft_name);
    if (!bundled.empty()) return bundled;
    throw Error(fmt::format("\"{}\": {} does not exist (the draft is looked up beside the target's file, then "
                            "among the bundled models){}",
                            draft, target_dir.empty() ? draft_name : (target_dir / draft_name).string(),
                            bundled_models_hint()));
}

namespace {

class SpeculativeLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        draft_ = f.text(draft);
        p_.ks = draft_ks_of(f.text(draft_ks));
        p_.temperatures = temperatures_of(f.text(temperatures));
        p_.base.n_predict = f.whole(spec_tokens);
        p_.base.sampling.seed = 1;
        p_.repetitions = f.whole(spec_repetitions);
        prompt_ = f.text(spec_prompt);
        p_.base.overlap = f.on(spec_overlap);
        // Asked, not yet done: each run looks for a free CPU first.
        ev.summary = fmt::format("draft {} proposing k = {} tokens, {} tokens per run{}", draft_,
                                 fmt::join(p_.ks, ", "), p_.base.n_predict,
                                 p_.base.overlap ? ", the draft to run ahead on a thread of its own when a CPU is free"
                                                 : "");
        ev.out(spec_overlap, yes_no(p_.base.overlap));
        ev.out(draft, draft_);
        ev.out(draft_ks, std::vector<double>(p_.ks.begin(), p_.ks.end()));
        ev.out(temperatures, std::vector<double>(p_.temperatures.begin(), p_.temperatures.end()));
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        llm::LlmModel& m = model.llm();
        const std::filesystem::path file = speculative_draft_file(m.path().parent_path(), draft_);
        // One thread for the draft: a small draft gains little from more, and
        // two busy pools would fight over the cores.
        // (On the target's kind of backend, as `sixstep speculate --backend` does.)
        auto backend = llm::make_backend(m.params().backend, llm::LlamaModel::load(file), {.n_threads = 1}).backend;
        const SpeculativeDraft d{draft_, backend.get()};
        const std::vector<int> prompt = m.codec().encode(prompt_);
        llm::Backend* target = &m.backend();
        std::unique_ptr<llm::Backend> lent;  // overlapped: the target, with a place for the draft's thread
        if (p_.base.overlap) {
            const auto* cpu = dynamic_cast<const llm::CpuBackend*>(&m.backend());
            if (!cpu)
                throw Error(fmt::format("\"{}\": the draft runs on a CPU thread beside the target, and this model runs "
                                        "on {}",
                                        spec_overlap, m.backend().name()));
            if (cpu->n_threads() < 2)
                throw Error(fmt::format("\"{}\": needs 2 threads or more (one of them the draft's); the model runs on {}",
                                        spec_overlap, cpu->n_threads()));
            lent = llm::make_backend(llm::BackendKind::cpu, m.llama_shared(),
                                     {.n_threads = cpu->n_threads(), .n_helpers = 1})
                       .backend;
            target = lent.get();
            p_.alone = &m.backend();
        }
        ex.speculative = sweep_speculative(*target, std::span(&d, 1), m.codec(), prompt, p_);
        p_.alone = nullptr;
        ev.summary = fmt::format("{} settings, each speculative and target-alone, {} timed runs each",
                                 ex.speculative.size(), p_.repetitions);
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const std::vector<SweepRow>& rows = ex.speculative;
        std::vector<double> ks, temps;
        for (const SweepRow& r : rows) ks.push_back(r.k), temps.push_back(r.temperature);
        ev.out("ks", ks);
        ev.out("temperatures", temps);
        ev.out("acceptance", column(rows, &SweepRow::acceptance));
        ev.out("tokens_per_pass", column(rows, &SweepRow::tokens_per_pass));
        ev.outputs.back().digits = 3;  // 2.78, as each row's line below
        ev.out("speculative_tok_s", column(rows, &SweepRow::speculative_tok_s), "tok/s");
        ev.out("target_tok_s", column(rows, &SweepRow::target_tok_s), "tok/s");
        ev.out("spec_speedup", column(rows, &SweepRow::speedup));
        ev.out("verify_pass_cost", column(rows, &SweepRow::verify_pass_cost));
        ev.outputs.back().digits = 2;  // 2.0, as each row's line below
        for (const SweepRow& r : rows) {
            ev.says(fmt::format("k = {}, T = {}: {:.0f}% accepted, {:.2f} tokens per target pass, {:.2f}× — {}", r.k,
                                r.temperature, 100 * r.acceptance, r.tokens_per_pass, r.speedup, r.verdict));
            if (r.n_declined > 0) ev.says(took_turns_note(r));
        }
        ev.summary = fmt::format("{} settings measured", rows.size());
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const std::vector<SweepRow>& rows = ex.speculative;
        bool identical = true;
        int greedy = 0;
        double acc_min = 1, acc_max = 0, acc_greedy_min = 1, tpp_max = 0, best_speedup = 0;
        const SweepRow* best = &rows.front();
        for (const SweepRow& r : rows) {
            acc_min = std::min(acc_min, r.acceptance);
            acc_max = std::max(acc_max, r.acceptance);
            tpp_max = std::max(tpp_max, r.tokens_per_pass);
            if (r.speedup > best_speedup) best_speedup = r.speedup, best = &r;
            if (r.temperature == 0) {
                ++greedy;
                identical = identical && r.identical;
                acc_greedy_min = std::min(acc_greedy_min, r.acceptance);
            }
        }
        const SweepRow& first = rows.front();
        const SweepRow& last = rows.back();
        int declined_runs = 0;
        for (const SweepRow& r : rows) declined_runs += r.n_declined;
        ev.out("greedy_identical", greedy ? yes_no(identical) : std::string("no greedy row"));
        ev.out("greedy_acceptance_min", greedy ? acc_greedy_min : 0.0);
        ev.out("acceptance_min", acc_min);
        ev.out("tokens_per_pass_max", tpp_max);
        ev.out("acceptance_last_over_first", first.acceptance > 0 ? last.acceptance / first.acceptance : 0);
        ev.out("best_speedup", best_speedup);
        ev.out("best_k", static_cast<double>(best->k));
        ev.out("overlap_declined_runs", static_cast<double>(declined_runs));
        ev.summary = fmt::format("greedy output identical: {}; best speedup {:.2f}× at k = {}",
                                 greedy ? yes_no(identical) : std::string("no greedy row"), best_speedup, best->k);
        const std::string accepted = std::lround(100 * acc_min) == std::lround(100 * acc_max)
                                         ? fmt::format("{:.0f}%", 100 * acc_min)
                                         : fmt::format("{:.0f}–{:.0f}%", 100 * acc_min, 100 * acc_max);
        // How the best setting's draft ran, when it was asked to overlap.
        const std::string how = !p_.base.overlap ? ""
                                : best->n_declined == 0 ? ", the draft running ahead on a thread of its own"
                                : best->n_declined == best->n_timed
                                    ? ", taking turns: no CPU was free for the draft's thread"
                                    : fmt::format(", taking turns in {} of {} timed runs: no CPU was free for the "
                                                  "draft's thread",
                                                  best->n_declined, best->n_timed);
        // Sentences, each whole or left out (a screen translates them one by one).
        return fmt::format("The draft's guesses were accepted {} of the time, so at best a pass of the target "
                           "produced {:.2f} tokens on average.{} The best setting, k = {}, ran {:.2f}× the target "
                           "alone on this machine{}.{}",
                           accepted, tpp_max,
                           greedy ? (identical ? " The greedy text was the target's own, token for token."
                                               : " But the greedy text DIFFERED from the target's.")
                                  : "",
                           best->k, best_speedup, how,
                           best->even && best->rounds.straddles_one()
                               ? fmt::format(" About the same: its middle timed rounds ran {:.2f}–{:.2f}×, either "
                                             "side of 1×.",
                                             best->rounds.low, best->rounds.high)
                           : best->even
                               ? fmt::format(" About the same: within {:.0f}% of 1×.", 100 * even_band)
                           : best_speedup < 1
                               ? " A loss: a pass of this tiny target costs about as much as the draft's guesses it "
                                 "saves."
                               : std::string());
    }

private:
    std::string draft_, prompt_;
    SweepParams p_{.ks = {}, .temperatures = {}, .base = {}, .repetitions = 1};
};

}  // namespace

std::unique_ptr<LabExperiment> make_speculative_lab() { return std::make_unique<SpeculativeLab>(); }

// Every (temperature, k) runs speculative and target-alone repetitions + 1
// times (one untimed). The target alone computes the prompt and each token
// (P + N). A speculative step costs each model at most k + 1 positions (the
// tokens it has not seen, then k drafts on one, k proposals plus the last
// token on the other) and emits at least one token, so at most N steps:
// P + N(k + 1) on the target, as many on the draft.
Work speculative_lab_work(const FieldLookup& field) {
    const long long n = lab::whole_field(field, spec_tokens);
    const long long prompt = llm::encoded_tokens_at_most(field(spec_prompt));
    long long per_temperature = 0;
    // Overlapped, the draft runs ahead up to 2k + 2 proposals and a
    // rejection throws them away: up to 2k + 3 passes per step.
    const bool overlap = field(spec_overlap) == ServingModel::describe().knob(spec_overlap).spelled(true);
    for (long long k : lab::whole_numbers(field(draft_ks)))
        per_temperature += (prompt + n) + (prompt + n * (k + 1)) + (prompt + n * (overlap ? 2 * k + 3 : k + 1));
    Work w;
    w.forward_tokens = lab::list_length(field(temperatures)) * (lab::whole_field(field, spec_repetitions) + 1) *
                       per_temperature;
    return w;
}

void declare_speculative_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    knobs.push_back(lab::knob(draft, KnobType::text, "stories-draft-f16.gguf",
                              "speculative: the draft model's file, beside the target's (the same vocabulary)"));
    Knob ks = lab::knob(draft_ks, KnobType::text, "1,2,4,8", "speculative: draft lengths k, ascending, comma-separated");
    ks.rule = [](const std::string& text) { (void)draft_ks_of(text); };
    knobs.push_back(std::move(ks));
    Knob ts = lab::knob(temperatures, KnobType::text, "0",
                        "speculative: temperatures, ascending (0: greedy, checked against the target's text)");
    ts.rule = [](const std::string& text) { (void)temperatures_of(text); };
    knobs.push_back(std::move(ts));
    // 2 at least: the first token comes from the prompt's pass, and a run of
    // one drafts nothing to judge.
    knobs.push_back(lab::whole(spec_tokens, 2, 4096, 32, "tokens", "speculative: tokens generated per run"));
    knobs.push_back(lab::whole(spec_repetitions, 1, 100, 1, "", "speculative: timed runs of each setting (median kept)"));
    Knob prompt = lab::knob(spec_prompt, KnobType::text, "Once upon a time", "speculative: the text to continue");
    prompt.rule = [](const std::string& text) {  // "" was run as the default prompt, unsaid
        if (text.empty()) throw Error("spec_prompt is empty: the models need a text to continue, e.g. \"Once upon a time\"");
    };
    knobs.push_back(prompt);
    knobs.push_back(lab::knob(spec_overlap, KnobType::boolean, "false",
                              "speculative: the draft runs ahead on a thread of its own, lent to the target between "
                              "its passes (CPU, 2 threads or more)"));
    const Stage rq = Stage::request, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, draft), VT::text, "", "speculative: the draft's file name"},
        {path(rq, draft_ks), VT::numbers, "", "speculative: the draft lengths"},
        {path(rq, temperatures), VT::numbers, "", "speculative: the temperatures"},
        {path(rq, spec_overlap), VT::text, "",
         "speculative: \"yes\" when the draft was asked to run ahead on a thread of its own (it takes turns when no "
         "CPU is free; postprocess.overlap_declined_runs counts those runs)"},
        {path(op, "ks"), VT::numbers, "", "speculative: k of each row"},
        {path(op, "temperatures"), VT::numbers, "", "speculative: temperature of each row"},
        {path(op, "acceptance"), VT::numbers, "", "speculative: drafted tokens the target accepted ÷ drafted, per row"},
        {path(op, "tokens_per_pass"), VT::numbers, "", "speculative: tokens emitted per target pass, per row"},
        {path(op, "speculative_tok_s"), VT::numbers, "tok/s", "speculative: tokens/s with the draft, per row"},
        {path(op, "target_tok_s"), VT::numbers, "tok/s", "speculative: tokens/s of the target alone, per row"},
        {path(op, "spec_speedup"), VT::numbers, "", "speculative: speculative ÷ target alone, per generated token"},
        {path(op, "verify_pass_cost"), VT::numbers, "",
         "speculative: one verify pass of k + 1 rows ÷ a token of the target alone, per row (1: free, k + 1: no saving)"},
        {path(pp, "greedy_identical"), VT::text, "", "speculative: \"yes\" when every greedy row's text is the target's"},
        {path(pp, "greedy_acceptance_min"), VT::number, "", "speculative: the lowest acceptance of the greedy rows"},
        {path(pp, "acceptance_min"), VT::number, "", "speculative: the lowest acceptance of all rows"},
        {path(pp, "tokens_per_pass_max"), VT::number, "", "speculative: the most tokens per target pass, on average over a row"},
        {path(pp, "overlap_declined_runs"), VT::number, "",
         "speculative: timed runs asked to overlap that took turns (no CPU free for the draft's thread)"},
        {path(pp, "acceptance_last_over_first"), VT::number, "", "speculative: the last row's acceptance ÷ the first's"},
        {path(pp, "best_speedup"), VT::number, "", "speculative: the highest speedup measured (machine-dependent)"},
        {path(pp, "best_k"), VT::number, "", "speculative: its k"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
