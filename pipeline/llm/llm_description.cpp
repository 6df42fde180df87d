// What the language model declares about itself: its knobs (the request's
// fields: the prompt and the sampling settings), every path its six stages
// emit, what each stage shows large, and what a request costs.
// tests/llm/test_llm_description.cpp runs the model and checks that it emits exactly these paths, and that the
// request stage's defaults and ranges are the declared ones.
#include <limits>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/stage.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/sampler.h"
#include "pipeline/llm/trace_keys.h"

namespace sixstep::llm {

namespace {

std::string path(Stage s, const char* key) { return fmt::format("{}.{}", stage_name(s), key); }
std::string text_of(double x) { return format_value(Value{x}); }

Knob number(const char* name, double lo, double hi, bool whole, std::string default_value, const char* meaning) {
    Knob k;
    k.name = name;
    k.type = KnobType::number;
    k.target = KnobTarget::request;
    k.min = lo, k.max = hi, k.whole = whole;
    k.default_value = std::move(default_value);
    k.meaning = meaning;
    return k;
}

std::vector<Knob> knobs() {
    const SamplerParams sampling;
    const LlmModelParams model;
    std::vector<Knob> out;
    Knob prompt;
    prompt.name = keys::prompt;
    prompt.type = KnobType::text;
    prompt.meaning = "the text to continue (required)";
    prompt.required = true;
    // Here, where a lesson writes it: "" failed only when the step ran.
    prompt.rule = [](const std::string& text) {
        if (text.empty()) throw Error("prompt is empty: give at least one character to continue from");
    };
    out.push_back(prompt);
    Knob max_tokens = number(keys::max_tokens, 1, 1e6, true, std::to_string(model.max_tokens), "most tokens to generate");
    max_tokens.unit = "tokens";
    out.push_back(max_tokens);
    out.push_back(number(keys::temperature, 0, 100, false, text_of(sampling.temperature),
                         "0: greedy, always the most likely token; higher: flatter, more random choices"));
    out.push_back(number(keys::top_k, 0, 1e9, true, std::to_string(sampling.top_k),
                         "keep the k most likely tokens (0: off)"));
    Knob top_p = number(keys::top_p, 0, 1, false, text_of(sampling.top_p),
                        "keep the fewest tokens whose probabilities reach p (1: off)");
    top_p.min_exclusive = true;
    out.push_back(top_p);
    Knob min_p = number(keys::min_p, 0, 1, false, text_of(sampling.min_p),
                        "drop tokens below min_p × p(most likely token) (0: off)");
    min_p.max_exclusive = true;
    out.push_back(min_p);
    out.push_back(number(keys::seed, 0, 1.8e19, true, std::to_string(sampling.seed),
                         "seed of the random draw: the same seed gives the same text"));
    Knob stop;
    stop.name = keys::stop;
    stop.type = KnobType::text;
    stop.meaning = "stop when the text contains this (it is not included)";
    out.push_back(stop);
    Knob force;
    force.name = keys::force;
    force.type = KnobType::text;
    force.meaning = "tokens to take instead of sampling, as generated-index:token-id pairs (\"0:412, 3:99\"); "
                    "a lesson writes `force:` instead";
    // Its form here ("-1" and "0:412:3" failed only when the step ran); the
    // ids against the vocabulary once the model is open.
    force.rule = [](const std::string& text) { (void)parse_forced(text, std::numeric_limits<int>::max()); };
    out.push_back(force);
    return out;
}

std::vector<PathInfo> paths() {
    using VT = ValueType;
    const Stage rq = Stage::request, ld = Stage::load, fw = Stage::forward, op = Stage::output, pp = Stage::postprocess,
                rs = Stage::respond;
    std::vector<PathInfo> p = {
        // 1 request: the fields as understood, then the tokens
        {path(rq, keys::prompt), VT::text, "", "the prompt as written", true},
        {path(rq, keys::max_tokens), VT::number, "tokens", "most tokens to generate"},
        {path(rq, keys::temperature), VT::number, "", "sampling temperature (0: greedy)"},
        {path(rq, keys::top_k), VT::number, "", "top-k filter (0: off)"},
        {path(rq, keys::top_p), VT::number, "", "top-p filter (1: off)"},
        {path(rq, keys::min_p), VT::number, "", "min-p filter (0: off)"},
        {path(rq, keys::seed), VT::number, "", "seed of the random draw"},
        {path(rq, keys::force), VT::text, "", "tokens chosen by hand (index:id pairs), when any"},
        {path(rq, keys::n_tokens), VT::number, "tokens", "prompt length in tokens"},
        {path(rq, keys::token_ids), VT::numbers, "", "the prompt's token ids"},
        {path(rq, keys::token_pieces), VT::text, "", "the prompt's tokens as text, quoted: \"The\" \" cat\" …", true},
        // 2 load (a reused model answers status, cold and load_ms only)
        {path(ld, keys::file), VT::text, "", "the GGUF file (cold load only)"},
        {path(ld, keys::status), VT::text, "", "\"cold load\" or \"reused\""},
        {path(ld, keys::load_ms), VT::number, "ms", "time to map the file, build the backend and warm it up (0 when reused)"},
        {path(ld, keys::n_params), VT::number, "", "parameters in the model"},
        {path(ld, keys::type), VT::text, "", "main weight type, as ggml names it: f32, f16, q8_0, q4_0"},
        {path(ld, keys::n_vocab), VT::number, "", "tokens in the vocabulary"},
        {path(ld, keys::n_ctx), VT::number, "tokens", "context per request"},
        {path(ld, keys::n_embd), VT::number, "", "embedding width"},
        {path(ld, keys::n_layer), VT::number, "", "transformer blocks"},
        {path(ld, keys::n_head), VT::number, "", "attention heads"},
        {path(ld, keys::n_head_kv), VT::number, "", "key/value heads (grouped-query attention)"},
        {path(ld, keys::n_ff), VT::number, "", "feed-forward width"},
        {path(ld, keys::backend), VT::text, "", "the backend that runs the forward pass"},
        {path(ld, keys::kv_bytes_per_token), VT::number, "B", "KV cache bytes per token: 2 × n_layer × n_head_kv × head_dim × 4"},
        {path(ld, keys::cpu_weights_mib), VT::number, "MiB",
         "the matrices the CPU backend copied into memory of its own (CPU backend, cold load only)"},
        {path(ld, keys::huge_pages_mib), VT::number, "MiB",
         "of that copy, what the operating system put on huge pages (2 MiB each; CPU backend, cold load only)"},
        // 3 forward: prefill (iteration 0), then one decode step per token
        {path(fw, keys::phase), VT::text, "", "\"prefill\" (the whole prompt) or \"decode\" (one token)"},
        {path(fw, keys::n_tokens), VT::number, "tokens", "tokens in this pass"},
        {path(fw, keys::tokens), VT::numbers, "", "their ids"},
        {path(fw, keys::positions), VT::numbers, "", "their positions"},
        {path(fw, keys::kv_used_tokens), VT::number, "tokens", "tokens in the KV cache after the pass"},
        {path(fw, keys::kv_ctx_tokens), VT::number, "tokens", "KV cache capacity"},
        {path(fw, keys::kv_blocks_used), VT::number, "", "KV cache blocks in use"},
        {path(fw, keys::kv_bytes_used), VT::number, "B", "KV cache bytes in use: whole blocks, all layers"},
        {path(fw, keys::kv_bytes_allocated), VT::number, "B", "KV cache memory actually allocated (block by block, on first use)"},
        {path(fw, keys::forward_ms), VT::number, "ms", "time of the pass"},
        {path(fw, keys::tokens_per_s), VT::number, "tok/s", "tokens in / time of the pass"},
        // 4 output: logits → probabilities
        {path(op, keys::n_vocab), VT::number, "", "logits computed, one per vocabulary token"},
        {path(op, keys::top1_id), VT::number, "", "id of the most likely next token"},
        {path(op, keys::top1_piece), VT::text, "", "the most likely next token", true},
        {path(op, keys::top1_prob), VT::number, "", "its probability (softmax at temperature 1)"},
        {path(op, keys::top1_logit), VT::number, "", "its logit"},
        {path(op, keys::top_ids), VT::numbers, "", "ids of the top-N tokens, most likely first"},
        {path(op, keys::top_pieces), VT::text, "", "the top-N tokens as text, quoted", true},
        {path(op, keys::top_probs), VT::numbers, "", "their probabilities"},
        // 5 postprocess: sample, detokenize, stop?
        {path(pp, keys::token_id), VT::number, "", "id of the chosen token"},
        {path(pp, keys::token_piece), VT::text, "", "the chosen token", true},
        {path(pp, keys::token_prob), VT::number, "", "its probability before the sampler's filters"},
        {path(pp, sixstep::keys::text), VT::text, "", "text completed by this token (may be empty mid-character)", true},
        {path(pp, keys::text_so_far), VT::text, "", "all generated text so far", true},
        {path(pp, keys::n_generated), VT::number, "tokens", "tokens generated so far"},
        {path(pp, keys::sampler), VT::text, "", "\"greedy\", \"chain\" or \"forced\""},
        {path(pp, keys::forced), VT::text, "", "\"yes\" when the token was chosen by hand (force), not sampled"},
        {path(pp, keys::final_top1_prob), VT::number, "",
         "the most likely candidate's probability after the filters and the temperature: what the draw used (not when forced)"},
        {path(pp, keys::sampler_chain), VT::text, "", "the chain's stages with the candidates each kept"},
        {path(pp, keys::stop), VT::text, "", "\"yes\" when generation stops here"},
        {path(pp, keys::stop_reason), VT::text, "", "why: \"eos\", \"max_tokens\", \"stop_string\"; \"none\" while going on"},
        {path(pp, keys::token_ms), VT::number, "ms", "latency of this token"},
        // 6 respond: the text and its timings
        {path(rs, sixstep::keys::text), VT::text, "", "the generated text", true},
        {path(rs, keys::n_prompt), VT::number, "tokens", "prompt tokens"},
        {path(rs, keys::n_generated), VT::number, "tokens", "generated tokens"},
        {path(rs, keys::stop_reason), VT::text, "", "why generation stopped"},
        {path(rs, keys::ttft_ms), VT::number, "ms", "time to first token: tokenize + prefill + first sample"},
        {path(rs, keys::tpot_ms), VT::number, "ms", "time per output token after the first (none for a one-token answer)"},
        {path(rs, keys::tpot_p50_ms), VT::number, "ms", "median time per output token after the first (a pause of the machine cannot move it; none for one token)"},
        {path(rs, keys::total_ms), VT::number, "ms", "the whole request"},
        {path(rs, keys::prefill_tok_s), VT::number, "tok/s", "prefill speed"},
        {path(rs, keys::decode_tok_s), VT::number, "tok/s", "decode speed (none for a one-token answer)"},
    };
    // The response carries the respond stage's outputs ("response.text" is
    // common to every model).
    const std::string respond_prefix = path(rs, "");
    std::vector<PathInfo> response;
    for (const auto& q : p)
        if (q.path.rfind(respond_prefix, 0) == 0 && q.path != path(rs, sixstep::keys::text)) {
            PathInfo r = q;
            r.path = "response." + q.path.substr(respond_prefix.size());
            response.push_back(r);
        }
    p.insert(p.end(), response.begin(), response.end());
    add_common_paths(p);
    // What the lesson interpreter answers for this kind beyond the trace: the
    // panels' engine data and the experiments a step can run.
    const std::vector<PathInfo> more = {
        {"kv_experiment.tokens", VT::number, "tokens", "tokens generated twice, with and without the KV cache (greedy)"},
        {"kv_experiment.identical_tokens", VT::text, "", "\"yes\" when both runs chose the same tokens"},
        {"kv_experiment.max_logit_diff", VT::number, "", "largest difference between the two runs' logits"},
        {"kv_experiment.cached_ms", VT::numbers, "ms", "each step's forward pass with the cache (the first: the prompt)"},
        {"kv_experiment.uncached_ms", VT::numbers, "ms", "each step's forward pass without it (the whole sequence again)"},
        {"kv_experiment.cached_total_ms", VT::number, "ms", "all forward passes with the cache"},
        {"kv_experiment.uncached_total_ms", VT::number, "ms", "all forward passes without it"},
        {"kv_experiment.cached_early_ms", VT::number, "ms", "median decode step with the cache, first quarter of the steps"},
        {"kv_experiment.cached_late_ms", VT::number, "ms", "median decode step with the cache, last quarter"},
        {"kv_experiment.uncached_early_ms", VT::number, "ms", "median step without the cache, first quarter of the decode steps"},
        {"kv_experiment.uncached_late_ms", VT::number, "ms", "median step without the cache, last quarter"},
        {"kv_experiment.tokens_read_cached", VT::number, "tokens", "tokens all forward passes read, with the cache"},
        {"kv_experiment.tokens_read_uncached", VT::number, "tokens", "and without it: every step's whole context"},
        {"kv_experiment.text", VT::text, "", "the text both runs generated (the cached run's)", true},
        {"kv_calc.shape", VT::text, "", "where the shape came from: a preset's name, or \"typed\""},
        {"kv_calc.n_layer", VT::number, "", "layers holding K and V"},
        {"kv_calc.n_head_kv", VT::number, "", "key/value heads per layer"},
        {"kv_calc.head_dim", VT::number, "", "values per head"},
        {"kv_calc.dtype", VT::text, "", "element type of the cache: f32, f16, bf16, fp8, int8, q8_0, q4_0"},
        {"kv_calc.bytes_per_element", VT::number, "B", "bytes per stored value (q8_0: 34/32)"},
        {"kv_calc.tokens", VT::number, "tokens", "tokens per session"},
        {"kv_calc.sessions", VT::number, "", "sessions held at once"},
        {"kv_calc.bytes_per_token", VT::number, "B", "2 × n_layer × n_head_kv × head_dim × bytes per element"},
        {"kv_calc.bytes_per_session", VT::number, "B", "bytes per token × tokens"},
        {"kv_calc.bytes_total", VT::number, "B", "bytes per session × sessions"},
        {"kv_calc.formula", VT::text, "", "the three lines of the formula with the numbers in them"},
        {"logit_lens.pieces", VT::text, "", "per layer, the token the residual stream predicts (quoted), first layer first", true},
        {"logit_lens.probs", VT::numbers, "", "per layer, its probability"},
        {"logit_lens.last_piece", VT::text, "", "the last layer's token: the output stage's top token", true},
        {"logit_lens.last_prob", VT::number, "",
         "its probability: the output stage's, computed again from the last layer by the reference matmul, so equal "
         "within rounding (compare with a tol)"},
    };
    p.insert(p.end(), more.begin(), more.end());
    return p;
}

std::vector<PanelInfo> panels() {
    return {
        {"tokens", "the prompt as coloured pieces with ids, generated tokens appended as they come"},
        {"next_token", "the most likely next tokens as bars, the sampler's table after each filter; click one to force it"},
        {"kv_cache", "the KV cache filling: layer × KV head × position, its blocks and block table, bytes by the formula"},
        {"timeline", "prefill and every decode step as bars of engine time, with TTFT and TPOT marked"},
        {"attention", "one layer's and head's attention weights, query × key position, the causal mask visible"},
        {"logit_lens", "per layer, the token the model would predict if it stopped there"},
        {"kv_experiment", "the same generation with and without the KV cache, step by step"},
        {"kv_calc", "the KV memory calculator: bytes per token, per session, for all sessions"},
    };
}

std::vector<Headline> headlines() {
    return {
        {Stage::request, {{keys::n_tokens}}},
        {Stage::load, {{keys::status}}},
        {Stage::forward, {{keys::n_tokens}}},  // what the pass read: the prompt, then 1 per decode step
        // "“ mat” 0.43" said nothing of what 0.43 was.
        {Stage::output, {{keys::top1_piece, 6, true}, {keys::top1_prob, 2, false, "", "", "p = "}}, " "},
        {Stage::postprocess, {{keys::token_piece, 6, true}}},
        {Stage::respond, {{sixstep::keys::text}}},
    };
}

// A request generates at most max_tokens, one decode step each; a run of one
// stage or one token moves the loop on by at most one.
WorkDeclaration work() {
    WorkDeclaration w;
    w.charge = WorkDeclaration::Charge::each_run;
    w.whole = [](const FieldLookup& field) {
        Work x;
        x.generated_tokens = static_cast<long long>(std::stod(field(keys::max_tokens)));
        return x;
    };
    w.one_step.generated_tokens = 1;
    return w;
}

}  // namespace

const ModelDescription& LlmModel::describe() {
    static const ModelDescription d{"llm", "a Llama-architecture transformer read from GGUF", knobs(), paths(),
                                    headlines(), /*trains=*/false, panels(), work(),
                                    /*check_request_value=*/{}, /*in_path_unit=*/{}};
    return d;
}

}  // namespace sixstep::llm
