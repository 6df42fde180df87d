// The serving lab's quantization (lesson 12): the loaded model as it is,
// then rewritten as Q8_0 and Q4_0 (tools/quantize.h) into a temporary
// folder; each one's file size, the weight bytes one decode step reads, its
// measured decode rate (tools/bench.h) beside the rate its bytes alone
// predict, and its quality on the held-out stories — perplexity, and KL
// divergence and logit differences against the original (tools/perplexity.h).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "pipeline/core/data_dir.h"
#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/serving/serving_lab.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/tools/bench.h"
#include "pipeline/tools/perplexity.h"
#include "pipeline/tools/quantize.h"

namespace sixstep::serving {

namespace {

constexpr char ppl_docs[] = "ppl_docs";
using lab::bench_repetitions;
using lab::bench_tokens;
constexpr char heldout_stories[] = "assets/data/heldout-stories.txt";

// A folder of its own under the system's temporary folder, removed with everything in it.
struct TempFolder {
    std::filesystem::path path;
    TempFolder() {
        std::random_device rd;
        path = std::filesystem::temp_directory_path() / fmt::format("sixstep-quantize-{:08x}", rd());
        std::filesystem::create_directories(path);
    }
    ~TempFolder() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

std::string read_file(const std::filesystem::path& p) {
    return read_regular_file(p.string(), "the held-out text", 256u << 20);
}

template <class F>
std::vector<double> column(const std::vector<QuantizationRow>& rows, F f) {
    std::vector<double> out;
    for (const QuantizationRow& r : rows) out.push_back(f(r));
    return out;
}

class QuantizationLab : public LabExperiment {
public:
    void read(const LabFields& f, TraceEvent& ev) override {
        docs_ = f.whole(ppl_docs);
        n_gen_ = f.whole(bench_tokens);
        ev.summary = fmt::format("the model as it is, Q8_0 and Q4_0; perplexity on {} held-out {}", docs_,
                                 docs_ == 1 ? "story" : "stories");
        ev.out(ppl_docs, static_cast<double>(docs_));
    }

    void run(ServingModel& model, ServingExhibit& ex, TraceEvent& ev) override {
        llm::LlmModel& m = model.llm();
        const std::string text = read_file(data_path(heldout_stories));
        llm::PerplexityParams pp;
        pp.max_docs = docs_;
        llm::BenchParams bp;
        bp.n_prompt = 0;
        bp.n_gen = n_gen_;
        bp.repetitions = bench_repetitions;
        const int threads = m.params().n_threads;

        // The original: the reference every other row is compared with.
        QuantizationRow own;
        own.type = upper(llm::ggml_type_name(m.llama().main_type()));
        own.file_bytes = static_cast<double>(std::filesystem::file_size(m.path()));
        own.step_bytes = static_cast<double>(llm::decode_weight_bytes(m.llama()));
        own.decode_tok_s = llm::run_bench(m.backend(), bp).decode.median_tok_s;
        own.predicted_tok_s = own.decode_tok_s;
        own.perplexity = llm::perplexity(m.backend(), m.vocab(), text, pp).perplexity;
        own.top1_agreement = 1;
        ex.quantization.push_back(own);

        TempFolder tmp;
        for (llm::GGMLType type : {llm::GGMLType::Q8_0, llm::GGMLType::Q4_0}) {
            const auto out = tmp.path / fmt::format("model-{}.gguf", llm::ggml_type_name(type));
            const llm::QuantizeReport q = llm::quantize_model(m.path(), out, {.type = type, .allow_requantize = true});
            const auto model_q = llm::LlamaModel::load(out);
            // On the original's kind of backend, so that the rows compare types, not machines.
            auto backend = llm::make_backend(m.params().backend, model_q, {.n_threads = threads}).backend;
            QuantizationRow r;
            r.type = upper(llm::ggml_type_name(type));
            r.file_bytes = static_cast<double>(q.file_bytes_out);
            r.step_bytes = static_cast<double>(llm::decode_weight_bytes(*model_q));
            r.decode_tok_s = llm::run_bench(*backend, bp).decode.median_tok_s;
            r.predicted_tok_s = own.decode_tok_s * own.step_bytes / r.step_bytes;
            const llm::PerplexityResult p = llm::perplexity(*backend, m.vocab(), text, pp, &m.backend());
            r.perplexity = p.perplexity;
            r.kl_mean = p.compare->kl_mean;
            r.max_logit_diff = p.compare->max_abs_logit_diff;
            r.top1_agreement = p.compare->top1_agreement;
            ex.quantization.push_back(r);
            ev.says(fmt::format("{}: {} tensors quantized, {} kept, in {:.2f} s", r.type, q.n_quantized, q.n_kept,
                                q.seconds));
        }
        ev.summary = fmt::format("{} versions timed and scored", ex.quantization.size());
    }

    void output(const ServingExhibit& ex, TraceEvent& ev) override {
        const auto& rows = ex.quantization;
        std::vector<std::string> names;
        for (const auto& r : rows) names.push_back(r.type);
        ev.out("types", fmt::format("{}", fmt::join(names, ", ")));
        ev.out("file_bytes", column(rows, [](const auto& r) { return r.file_bytes; }), "B");
        ev.out("step_bytes", column(rows, [](const auto& r) { return r.step_bytes; }), "B");
        ev.out("decode_tok_s", column(rows, [](const auto& r) { return r.decode_tok_s; }), "tok/s");
        ev.out("predicted_tok_s", column(rows, [](const auto& r) { return r.predicted_tok_s; }), "tok/s");
        ev.out("perplexity", column(rows, [](const auto& r) { return r.perplexity; }));
        ev.outputs.back().digits = 5;  // as the working prints them: 3.6783, 3.6788, not 3.678 twice
        ev.out("kl_mean", column(rows, [](const auto& r) { return r.kl_mean; }), "nats");
        ev.out("max_logit_diff", column(rows, [](const auto& r) { return r.max_logit_diff; }));
        ev.out("top1_agreement", column(rows, [](const auto& r) { return r.top1_agreement; }));
        // Perplexities in {:.5g}: a random-weight model's is near 1e115, which {:.4f} wrote out in 116 digits.
        for (const auto& r : rows)
            ev.says(fmt::format("{}: file {:.0f} B, {:.0f} B per decode step, {:.0f} tok/s (bytes predict {:.0f}), "
                                "perplexity {:.5g}, KL {} nats",
                                r.type, r.file_bytes, r.step_bytes, r.decode_tok_s, r.predicted_tok_s, r.perplexity,
                                shown_number(r.kl_mean)));  // as the out: line: 6.99×10⁻⁶, not 0.00001
        // To the five digits the lines above give (the three differ in the fourth).
        std::vector<std::string> ppl;
        for (const auto& r : rows) ppl.push_back(readable_number(r.perplexity, 5));
        ev.summary = fmt::format("perplexity {}", fmt::join(ppl, " / "));
    }

    std::string compare(const ServingExhibit& ex, TraceEvent& ev) override {
        const auto& rows = ex.quantization;
        const QuantizationRow &o = rows[0], &q8 = rows[1], &q4 = rows[2];
        ev.out("q8_0_file_ratio", q8.file_bytes / o.file_bytes);
        ev.out("q4_0_file_ratio", q4.file_bytes / o.file_bytes);
        ev.out("q8_0_step_ratio", q8.step_bytes / o.step_bytes);
        ev.out("q4_0_step_ratio", q4.step_bytes / o.step_bytes);
        ev.out("q8_0_speedup", q8.decode_tok_s / o.decode_tok_s);
        ev.out("q4_0_speedup", q4.decode_tok_s / o.decode_tok_s);
        ev.out("q8_0_perplexity_ratio", q8.perplexity / o.perplexity);
        ev.outputs.back().digits = 5;  // 1.0003, as the working's quotient
        ev.out("q4_0_perplexity_ratio", q4.perplexity / o.perplexity);
        ev.outputs.back().digits = 5;
        ev.out("q4_0_over_q8_0_kl", q8.kl_mean > 0 ? q4.kl_mean / q8.kl_mean : 0);
        // Perplexities with the digits that make them divide to the quotient printed.
        for (const QuantizationRow* r : {&q8, &q4}) {
            const Division ppl = division(
                r->perplexity, o.perplexity, 5, [](double x, int p) { return fmt::format("{:.{}g}", x, p); },
                [](double q) { return fmt::format("{:.4f}", q); });
            ev.says(fmt::format("{}: file {:.0f} ÷ {:.0f} B = {:.3f}; perplexity {} ÷ {} = {}", r->type, r->file_bytes,
                                o.file_bytes, r->file_bytes / o.file_bytes, ppl.a, ppl.b, ppl.q));
        }
        ev.summary = fmt::format("Q4_0: {:.0f}% of the bytes, perplexity × {:.3f}", 100 * q4.file_bytes / o.file_bytes,
                                 q4.perplexity / o.perplexity);
        return fmt::format("Q8_0 keeps {:.0f}% of the {} file's bytes and Q4_0 {:.0f}%. Each decode step reads that "
                           "much less, which predicts {:.0f} and {:.0f} tokens/s; this machine measured {:.0f} and "
                           "{:.0f} (the original: {:.0f}). Perplexity moved from {:.5g} to {:.5g} (Q8_0) and {:.5g} "
                           "(Q4_0); the most likely next token stayed the same at {:.1f}% and {:.1f}% of positions.",
                           100 * q8.file_bytes / o.file_bytes, o.type, 100 * q4.file_bytes / o.file_bytes,
                           q8.predicted_tok_s, q4.predicted_tok_s, q8.decode_tok_s, q4.decode_tok_s, o.decode_tok_s,
                           o.perplexity, q8.perplexity, q4.perplexity, 100 * q8.top1_agreement,
                           100 * q4.top1_agreement);
    }

private:
    int docs_ = 8, n_gen_ = 32;
};

}  // namespace

std::unique_ptr<LabExperiment> make_quantization_lab() { return std::make_unique<QuantizationLab>(); }

// Three versions (the original, Q8_0, Q4_0), each decoding bench_tokens in a
// warm-up and the timed runs, and scoring ppl_docs stories — the quantized
// ones through the original too, for KL. A story is [BOS] text [EOS]; a
// story longer than the window is scored in windows overlapping by half,
// so each of its tokens is computed at most twice.
Work quantization_lab_work(const FieldLookup& field) {
    const long long decode = (bench_repetitions + 1) * lab::whole_field(field, bench_tokens);
    const long long story = 2 * (heldout_story_bytes_at_most + 2);
    const long long scoring = lab::whole_field(field, ppl_docs) * story;
    Work w;
    w.forward_tokens = 3 * decode + (1 + 2 + 2) * scoring;
    // Per type: quantize reads the model, writes the copy and maps it back
    // to check it; the lab then maps the copy to measure it.
    w.model_file_passes = 2 * 4;
    return w;
}

void declare_quantization_lab(std::vector<Knob>& knobs, std::vector<PathInfo>& paths) {
    using lab::path;
    using VT = ValueType;
    knobs.push_back(lab::whole(ppl_docs, 1, 200, 8, "", "quantization: held-out stories scored for perplexity"));
    const Stage rq = Stage::request, op = Stage::output, pp = Stage::postprocess;
    const std::vector<PathInfo> p = {
        {path(rq, ppl_docs), VT::number, "", "quantization: held-out stories scored"},
        {path(op, "types"), VT::text, "", "quantization: the weight types, the model's own first (\"F16, Q8_0, Q4_0\")"},
        {path(op, "file_bytes"), VT::numbers, "B", "quantization: size of each file"},
        {path(op, "step_bytes"), VT::numbers, "B", "quantization: weight bytes one decode step reads, per type"},
        {path(op, "decode_tok_s"), VT::numbers, "tok/s", "quantization: decode tokens/s measured, per type"},
        {path(op, "predicted_tok_s"), VT::numbers, "tok/s",
         "quantization: the original's rate × its step bytes ÷ these (bytes alone)"},
        {path(op, "perplexity"), VT::numbers, "", "quantization: perplexity on the held-out stories, per type"},
        {path(op, "kl_mean"), VT::numbers, "nats", "quantization: mean KL(original ‖ this) per position"},
        {path(op, "max_logit_diff"), VT::numbers, "", "quantization: largest |logit − the original's|"},
        {path(op, "top1_agreement"), VT::numbers, "", "quantization: share of positions with the original's top token"},
        {path(pp, "q8_0_file_ratio"), VT::number, "", "quantization: Q8_0 file bytes ÷ the original's"},
        {path(pp, "q4_0_file_ratio"), VT::number, "", "quantization: Q4_0 file bytes ÷ the original's"},
        {path(pp, "q8_0_step_ratio"), VT::number, "", "quantization: Q8_0 bytes per decode step ÷ the original's"},
        {path(pp, "q4_0_step_ratio"), VT::number, "", "quantization: Q4_0 bytes per decode step ÷ the original's"},
        {path(pp, "q8_0_speedup"), VT::number, "", "quantization: Q8_0 decode tokens/s ÷ the original's (machine-dependent)"},
        {path(pp, "q4_0_speedup"), VT::number, "", "quantization: Q4_0 decode tokens/s ÷ the original's (machine-dependent)"},
        {path(pp, "q8_0_perplexity_ratio"), VT::number, "", "quantization: Q8_0 perplexity ÷ the original's"},
        {path(pp, "q4_0_perplexity_ratio"), VT::number, "", "quantization: Q4_0 perplexity ÷ the original's"},
        {path(pp, "q4_0_over_q8_0_kl"), VT::number, "", "quantization: Q4_0's mean KL ÷ Q8_0's"},
    };
    paths.insert(paths.end(), p.begin(), p.end());
}

}  // namespace sixstep::serving
