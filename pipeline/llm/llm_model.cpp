#include "pipeline/llm/llm_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/text.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/cpu/cpu_backend.h"
#include "pipeline/llm/llm_view.h"
#include "pipeline/llm/stepper.h"
#include "pipeline/llm/trace_keys.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> as_doubles(const std::vector<int>& v) { return {v.begin(), v.end()}; }

double parse_number(const Request& r, const char* key, double fallback, double lo, double hi) {
    const std::string* v = r.get(key);
    if (!v) return fallback;
    try {
        std::size_t used = 0;
        const double x = std::stod(*v, &used);
        if (used != v->size() || std::isnan(x)) throw std::invalid_argument(*v);
        if (x < lo || x > hi) throw Error(fmt::format("request field {} = {} is outside [{}, {}]", key, *v, lo, hi));
        return x;
    } catch (const Error&) {
        throw;
    } catch (const std::exception&) {
        throw Error(fmt::format("request field {} = \"{}\" is not a number", key, *v));
    }
}

// The first pass of a size pays for memory the backend's buffers touch for
// the first time: the bundled model's first 149-token prefill ran at
// 6,000–8,000 tokens/s on a 2-vCPU VM, every later one at 15,000–21,000, so
// lesson 05's prefill could read slower per token than decode. Servers warm
// up at load for this reason (llama.cpp's warm-up run, vLLM's profiling
// pass), so that their first user does not pay it: one prefill of up to
// warm_up_tokens and one decode step, through a scratch cache. A longer
// prompt grows the buffers again, and pays again for the part above. The
// prefill's length is held to a budget of parameters × tokens, so that a
// big model's load does not grow by seconds: 256 tokens for the bundled
// 3.8 M-parameter model (27 ms), 66 for a 15 M one, 9 for 110 M, 1 for a
// billion (where the arithmetic dwarfs the buffers' first touch anyway).
constexpr int warm_up_tokens = 256;
constexpr double warm_up_budget = 1e9;  // parameters × tokens

int warm_up_length(const LlamaModel& model, int n_ctx) {
    const double n_params = std::max(1.0, static_cast<double>(model.n_params()));
    const int by_budget = static_cast<int>(std::clamp(warm_up_budget / n_params, 1.0, double{warm_up_tokens}));
    return std::max(0, std::min(n_ctx - 1, by_budget));
}

}  // namespace

std::map<int, int> parse_forced(const std::string& text, int n_vocab) {
    std::map<int, int> out;
    std::string item;
    auto bad = [&](const std::string& why) {
        return Error(fmt::format("request field force = \"{}\": {}", text, why));
    };
    auto take = [&] {
        if (item.empty()) return;
        const auto colon = item.find(':');
        std::size_t used_k = 0, used_id = 0;
        long long k = -1, id = -1;
        try {
            if (colon == std::string::npos) throw std::invalid_argument(item);
            k = std::stoll(item.substr(0, colon), &used_k);
            id = std::stoll(item.substr(colon + 1), &used_id);
        } catch (const std::exception&) {
            throw bad(fmt::format("\"{}\" is not index:id (e.g. \"0:412\": token 412 as the first generated token)", item));
        }
        if (used_k != colon || used_id != item.size() - colon - 1 || k < 0)
            throw bad(fmt::format("\"{}\" is not index:id (e.g. \"0:412\": token 412 as the first generated token)", item));
        // Past any answer's end (max_tokens is at most 10⁶): 4294967296 was
        // stored as an int, wrapped to 0, and forced the first token.
        if (k >= 1000000)
            throw bad(fmt::format("index {} is past any answer's end (max_tokens is at most 1000000)", k));
        if (id < 0 || id >= n_vocab)
            throw bad(fmt::format("token id {} does not exist: the vocabulary has ids 0..{}", id, n_vocab - 1));
        if (out.count(static_cast<int>(k)))
            throw bad(fmt::format("index {} is forced twice (to {} and {})", k, out[static_cast<int>(k)], id));
        out[static_cast<int>(k)] = static_cast<int>(id);
        item.clear();
    };
    // "0 : 412" is "0:412": a space beside a colon was read as a separator,
    // and "0" alone was not index:id.
    std::string joined;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == ' ') {
            std::size_t next = text.find_first_not_of(' ', i);
            const bool by_colon = (!joined.empty() && joined.back() == ':') || (next != std::string::npos && text[next] == ':');
            if (by_colon) continue;
        }
        joined += text[i];
    }
    for (char c : joined) {
        if (c == ',' || c == ' ') take();
        else item += c;
    }
    take();
    return out;
}

std::string format_forced(const std::map<int, int>& forced) {
    std::string out;
    for (const auto& [k, id] : forced) out += fmt::format("{}{}:{}", out.empty() ? "" : ", ", k, id);
    return out;
}

// ---- the model ----------------------------------------------------------------------

struct LlmModel::Opened {
    std::optional<GGUFFile> file;
};

LlmModel::LlmModel(std::filesystem::path path, LlmModelParams params)
    : path_(std::move(path)), params_(params), opened_(std::make_unique<Opened>()) {}
LlmModel::~LlmModel() = default;

std::string LlmModel::name() const { return fmt::format("llm ({})", path_.filename().string()); }

void LlmModel::open() {
    if (vocab_) return;
    const auto t0 = Clock::now();
    GGUFFile f = GGUFFile::open(path_);
    try {
        vocab_ = std::make_shared<const Vocab>(Vocab::from_gguf(f));
    } catch (const Error& e) {
        throw e.with_context(fmt::format("error loading model vocabulary from {}", path_.string()));
    }
    codec_ = make_vocab_codec(vocab_);
    opened_->file.emplace(std::move(f));
    open_ms_ = ms_since(t0);
}

// What the loaded model is: the same after a cold load and when the weights
// are reused, so a lesson's later step can check it (a warm load gave
// "got (nothing)" for load.n_layer).
void LlmModel::describe_shape(TraceEvent& ev) {
    const LlamaHparams& hp = llama_->hparams();
    ev.out(keys::n_params, static_cast<double>(llama_->n_params()), "", "parameters");
    ev.out(keys::type, std::string(ggml_type_name(llama_->main_type())), "", "weight type");
    ev.out(keys::n_vocab, static_cast<double>(hp.n_vocab));
    ev.out(keys::n_ctx, static_cast<double>(n_ctx()), "tokens", "context");
    ev.out(keys::n_embd, static_cast<double>(hp.n_embd));
    ev.out(keys::n_layer, static_cast<double>(hp.n_layer));
    ev.out(keys::n_head, static_cast<double>(hp.n_head));
    ev.out(keys::n_head_kv, static_cast<double>(hp.n_head_kv));
    ev.out(keys::n_ff, static_cast<double>(hp.n_ff));
    ev.out(keys::backend, backend_->name());
    ev.out(keys::kv_bytes_per_token, static_cast<double>(kv_->stats().bytes_per_token), "B", "KV cache per token");
}

void LlmModel::load(TraceEvent& ev) {
    if (backend_) {
        ev.summary = "weights already in memory: reused";
        ev.out(keys::status, std::string("reused"));
        ev.out(sixstep::keys::cold, std::string("no"), "", "cold start");  // the same key as every model's load stage
        ev.out(keys::load_ms, 0.0, "ms", "load time");
        describe_shape(ev);
        return;
    }
    const auto t0 = Clock::now();
    open();
    try {
        llama_ = LlamaModel::from_gguf(std::move(*opened_->file));
        opened_->file.reset();
        BackendChoice choice = make_backend(params_.backend, llama_, {.n_threads = params_.n_threads});
        backend_ = std::move(choice.backend);
        backend_note_ = std::move(choice.note);
        kv_ = backend_->make_kv_cache(n_ctx());
        // Only an optimisation: a warm-up that fails (a GPU short of memory
        // for its buffers) leaves a model that can still serve short prompts.
        const auto tw = Clock::now();
        warm_up_note_.clear();
        try {
            warm_up_tokens_ = warm_up_length(*llama_, n_ctx());
            warm_up(*backend_, warm_up_tokens_);
        } catch (const std::exception& e) {
            warm_up_tokens_ = 0;
            warm_up_note_ = fmt::format("the warm-up pass failed ({}); the first request pays for its buffers", e.what());
        }
        warm_up_ms_ = ms_since(tw);
    } catch (...) {
        // Start from scratch next time rather than from a half-moved file.
        llama_.reset();
        backend_.reset();
        kv_.reset();
        vocab_.reset();
        codec_.reset();
        opened_->file.reset();
        throw;
    }
    const double ms = ms_since(t0) + open_ms_;
    const LlamaHparams& hp = llama_->hparams();
    // More than this stage's own time (the card's): the file was opened
    // before this stage, when its vocabulary was first needed (stage 1's
    // tokenizer, or the lesson's checks and panels before step 1). Said, or
    // the two figures read as one measured twice.
    // Times to the digits the outputs show (cold load time "312 ms", not
    // "311.5" above it).
    const auto t = [](double x) { return shown_number(x, 3); };
    ev.summary = fmt::format("mapped {} ({:.1f} M parameters, {}) in {} ms", path_.filename().string(),
                             llama_->n_params() / 1e6, ggml_type_name(llama_->main_type()), t(ms));
    if (warm_up_tokens_ > 0 && open_ms_ > 0)
        ev.summary += fmt::format(" ({} ms warming up, {} ms opening the file earlier)", t(warm_up_ms_), t(open_ms_));
    else if (warm_up_tokens_ > 0)
        ev.summary += fmt::format(" ({} ms warming up)", t(warm_up_ms_));
    else if (open_ms_ > 0)
        ev.summary += fmt::format(", {} ms of them opening the file earlier", t(open_ms_));
    ev.in(keys::file, path_.string());
    ev.out(keys::status, std::string("cold load"));
    ev.out(sixstep::keys::cold, std::string("yes"), "", "cold start");
    ev.out(keys::load_ms, ms, "ms", "cold load time");
    // The CPU backend's copy of the matrices (made as it was built): where
    // every decode step reads its weights from. Beside the load's time, before
    // the model's shape: what loading did comes first, and is what a lesson
    // points at (the inspector has room for a few rows at 1280×720).
    if (dynamic_cast<const CpuBackend*>(backend_.get())) {
        const CpuWeightsMemory copy = llama_->cpu_weights_memory();
        const auto mib = [](std::size_t bytes) { return std::round(static_cast<double>(bytes) / (1 << 20) * 10) / 10; };
        ev.out(keys::cpu_weights_mib, mib(copy.bytes), "MiB", "CPU copy");
        ev.out(keys::huge_pages_mib, mib(copy.huge_page_bytes), "MiB", "on huge pages");
    }
    describe_shape(ev);
    if (!backend_note_.empty()) ev.warnings.push_back(backend_note_);
    if (!warm_up_note_.empty()) ev.warnings.push_back(warm_up_note_);
    ev.says(fmt::format("KV cache per token = 2 × n_layer {} × n_head_kv {} × head_dim {} × 4 B = {} B", hp.n_layer,
                        hp.n_head_kv, hp.head_dim(), kv_->stats().bytes_per_token));
}

std::uint64_t LlmModel::weights_checksum() const {
    // Every byte of tensor data is hashed: a few ms for the bundled model,
    // about a second per GB for big files. The mapping is read-only too, so a
    // write would fault rather than go unnoticed.
    return llama_ ? llama_->weights_checksum() : 0;
}

const LlamaModel& LlmModel::llama() const {
    if (!llama_) throw Error("the model is not loaded yet");
    return *llama_;
}
const TextCodec& LlmModel::codec() {
    open();
    return *codec_;
}
const Vocab& LlmModel::vocab() {
    open();
    return *vocab_;
}
Backend& LlmModel::backend() {
    if (!backend_) throw Error("the model is not loaded yet");
    return *backend_;
}
KvCache& LlmModel::kv_cache() {
    if (!kv_) throw Error("the model is not loaded yet");
    return *kv_;
}
int LlmModel::token_of_piece(std::string_view piece) {
    return llm::token_of_piece(codec(), static_cast<int>(vocab().n_tokens()), piece);
}

LlmModel::AttentionShape LlmModel::attention_shape() {
    if (llama_) return {llama_->hparams().n_layer, llama_->hparams().n_head};
    open();
    return {static_cast<int>(opened_->file->get_u32("llama.block_count", 0)),
            static_cast<int>(opened_->file->get_u32("llama.attention.head_count", 0))};
}

int LlmModel::n_ctx() {
    if (params_.n_ctx > 0) return params_.n_ctx;
    if (llama_) return llama_->hparams().n_ctx;
    open();
    return static_cast<int>(opened_->file->get_u32("llama.context_length", default_n_ctx));
}

// ---- one request ----------------------------------------------------------------------

namespace {

class LlmJob : public Job {
public:
    LlmJob(LlmModel& model, Request request) : model_(model), request_(std::move(request)) {}

    void normalize(TraceEvent& ev) override {
        const std::string* prompt = request_.get(keys::prompt);
        if (!prompt) throw Error("request has no prompt (field \"prompt\")");
        if (prompt->empty()) throw Error("prompt is empty: give at least one character to continue from");
        // Fields the request leaves out take the sampler's defaults (sampler.h).
        const SamplerParams d;
        params_.n_predict = static_cast<int>(parse_number(request_, keys::max_tokens, model_.params().max_tokens, 1, 1e6));
        // The trace shows each number as the request wrote it; the sampler
        // works in float (0.95 there is 0.949999988, which a lesson's
        // `request.top_p: 0.95` would not equal).
        const auto written = [](float f) { return std::stod(fmt::format("{}", f)); };  // 0.95f as 0.95
        const double temperature = parse_number(request_, keys::temperature, written(d.temperature), 0, 100);
        const double top_p = parse_number(request_, keys::top_p, written(d.top_p), 1e-9, 1);
        const double min_p = parse_number(request_, keys::min_p, written(d.min_p), 0, 0.999999);
        params_.sampling.temperature = static_cast<float>(temperature);
        params_.sampling.top_k = static_cast<int>(parse_number(request_, keys::top_k, d.top_k, 0, 1e9));
        params_.sampling.top_p = static_cast<float>(top_p);
        params_.sampling.min_p = static_cast<float>(min_p);
        params_.sampling.seed = static_cast<std::uint64_t>(parse_number(request_, keys::seed, static_cast<double>(d.seed), 0, 1.8e19));
        if (const std::string* stop = request_.get(keys::stop); stop && !stop->empty()) params_.stop = {*stop};
        params_.top_n = model_.params().top_n;
        const std::string* force = request_.get(keys::force);

        // The first request opens the model file for its tokenizer: that is
        // load's time (added to load_ms there), not this stage's.
        const auto t_open = Clock::now();
        const bool was_open = model_.opened();
        const TextCodec& codec = model_.codec();
        if (!was_open) ev.other_stage_ms = ms_since(t_open);
        const auto t0 = Clock::now();
        tokens_ = codec.encode(*prompt);
        tokenize_ms_ = ms_since(t0);
        check_generation_fits(static_cast<int>(tokens_.size()), params_.n_predict, model_.n_ctx(), keys::max_tokens);
        if (force && !force->empty()) forced_ = parse_forced(*force, static_cast<int>(model_.vocab().n_tokens()));
        // A token forced past the answer's end was never used, without a word.
        if (!forced_.empty() && forced_.rbegin()->first >= params_.n_predict)
            throw Error(fmt::format("request field force: index {} is past the answer's end: max_tokens {} gives "
                                    "indices 0..{}",
                                    forced_.rbegin()->first, params_.n_predict, params_.n_predict - 1));
        std::string pieces;
        for (int t : tokens_) pieces += (pieces.empty() ? "" : " ") + quote_text(codec.piece(t));
        ev.summary = "tokenized the prompt into " + count_of(tokens_.size(), "token", "tokens");
        ev.in(keys::prompt, *prompt);
        ev.in(keys::max_tokens, static_cast<double>(params_.n_predict), "tokens");
        ev.in(keys::temperature, temperature);
        ev.in(keys::top_k, static_cast<double>(params_.sampling.top_k));
        ev.in(keys::top_p, top_p);
        ev.in(keys::min_p, min_p);
        ev.in(keys::seed, static_cast<double>(params_.sampling.seed));
        if (force && !force->empty()) ev.in(keys::force, *force, "", "tokens chosen by hand");
        ev.out(keys::n_tokens, static_cast<double>(tokens_.size()), "tokens", "prompt tokens");
        ev.out(keys::token_ids, as_doubles(tokens_), "", "token ids");
        ev.out(keys::token_pieces, pieces, "", "token pieces");
        ev.says(fmt::format("{} → {}", quote_text(*prompt), pieces));
        if (LlmView* v = model_.view()) {
            const std::uint64_t request = v->request + 1;
            std::optional<EarlierRequest> before;
            if (v->ttft_ms > 0) before = EarlierRequest{v->n_prompt, v->ttft_ms, v->tpot_ms, v->tpot_p50_ms};
            *v = LlmView{};
            v->request = request;
            v->before = before;
            for (int t : tokens_) v->tokens.push_back(view_token(t, true, false));
            v->n_prompt = static_cast<int>(tokens_.size());
            v->tokenize_ms = tokenize_ms_;
        }
    }

    void forward(TraceEvent& ev) override {
        if (!gen_) {
            auto gen = std::make_unique<Generation>(model_.codec(), tokens_, params_, tokenize_ms_);
            auto stepper = std::make_unique<Stepper>(model_.backend(), model_.kv_cache());
            stepper->attach(*gen);
            gen_ = std::move(gen);
            stepper_ = std::move(stepper);
        }
        const bool prefill = !gen_->prefilled();
        const std::span<const int> pending = gen_->pending();
        const std::vector<int> in_tokens(pending.begin(), pending.end());
        std::vector<int> in_pos;
        for (int i = 0; i < static_cast<int>(in_tokens.size()); ++i) in_pos.push_back(gen_->n_past() + i);
        stepper_->forward_all(model_.tensor_observer());
        const KvCacheStats st = model_.kv_cache().stats();
        const int kv_used = model_.kv_cache().n_tokens(gen_->seq());
        const double ms = gen_->last_forward_ms();
        ev.summary = prefill ? fmt::format("prefill: {} prompt tokens in one pass ({:.1f} ms)", in_tokens.size(), ms)
                             : fmt::format("decode: 1 token at position {} ({:.1f} ms)", in_pos.front(), ms);
        ev.in(keys::phase, std::string(prefill ? "prefill" : "decode"));
        ev.in(keys::n_tokens, static_cast<double>(in_tokens.size()), "tokens", "tokens in");
        ev.in(keys::tokens, as_doubles(in_tokens), "", "token ids");
        ev.in(keys::positions, as_doubles(in_pos), "", "positions");
        ev.out(keys::kv_used_tokens, static_cast<double>(kv_used), "tokens", "KV cache filled");
        ev.out(keys::kv_ctx_tokens, static_cast<double>(model_.n_ctx()), "tokens", "KV cache capacity");
        ev.out(keys::kv_blocks_used, static_cast<double>(st.n_blocks_used), "", "KV blocks used");
        ev.out(keys::kv_bytes_used, static_cast<double>(st.bytes_used), "B", "KV bytes used");
        ev.out(keys::kv_bytes_allocated, static_cast<double>(st.bytes_allocated), "B", "KV bytes allocated");
        ev.out(keys::forward_ms, ms, "ms", "forward time");
        ev.out(keys::tokens_per_s, ms > 0 ? in_tokens.size() * 1000.0 / ms : 0.0, "tok/s");
        if (LlmView* v = model_.view()) {
            v->passes.push_back({prefill, in_pos.front(), static_cast<int>(in_tokens.size()), ms, false, 0});
            view_kv(v->kv, st, kv_used);
        }
    }

    void output(TraceEvent& ev) override {
        const std::vector<float>& logits = gen_->logits();
        const auto top = top_n(logits, std::max(1, params_.top_n));
        const TextCodec& codec = model_.codec();
        std::vector<double> probs, ids;
        std::string pieces;
        for (const auto& c : top) {
            probs.push_back(c.p);
            ids.push_back(c.id);
            pieces += (pieces.empty() ? "" : " ") + quote_text(codec.piece(c.id));
            ev.says(fmt::format("p({}) = {}", quote_text(codec.piece(c.id)), shown_number(c.p)));
        }
        ev.summary = fmt::format("logits over {} tokens → softmax; most likely {} ({:.1f}%)", logits.size(),
                                 quote_text(codec.piece(top[0].id)), top[0].p * 100);
        ev.out(keys::n_vocab, static_cast<double>(logits.size()));
        ev.out(keys::top1_id, static_cast<double>(top[0].id));
        ev.out(keys::top1_piece, codec.piece(top[0].id), "", "most likely next token");
        ev.out(keys::top1_prob, top[0].p, "", "its probability");
        ev.out(keys::top1_logit, top[0].logit);
        ev.out(keys::top_ids, ids);
        ev.out(keys::top_pieces, pieces);
        ev.out(keys::top_probs, probs);
        if (LlmView* v = model_.view()) view_next(v->next, logits, top);
    }

    bool postprocess(TraceEvent& ev) override {
        SamplerTrace trace;
        trace.max_rows = std::max(1, params_.top_n);
        const auto f = forced_.find(static_cast<int>(gen_->tokens().size()));
        const bool forced = f != forced_.end();
        const double sample_ms_before = gen_->timings().sample_ms;
        const TokenEvent& te = forced ? gen_->force(f->second) : gen_->sample(&trace);
        std::string chain;
        for (const auto& st : trace.stages) {
            chain += (chain.empty() ? "" : " → ") + fmt::format("{} ({})", st.name, st.n_kept);
        }
        if (forced) chain = fmt::format("forced: {} (id {}) instead of sampling", quote_text(te.piece), te.token);
        const bool done = gen_->done();
        const std::string reason(stop_reason_name(gen_->stop_reason()));
        // p is the model's own probability (temperature 1, no filter); a draw
        // through the chain also gives the odds it was drawn with, which a
        // hot sampler makes far larger (" eat": 6.9×10⁻⁶, and 0.00044 at temperature 2).
        // As the out: line prints "its probability" (shown_number): ".3f"
        // printed that " eat" as 0.000, and "%.3g" 0.216 beside its 0.2165.
        const bool drawn = !forced && params_.sampling.temperature > 0;
        const std::string p = shown_number(te.p), piece = quote_text(te.piece);
        ev.summary = forced  ? fmt::format("forced {} (p = {})", piece, p)
                     : drawn ? fmt::format("sampled {} (p = {}; {} after the chain)", piece, p,
                                           shown_number(trace.chosen_p))
                             : fmt::format("sampled {} (p = {})", piece, p);
        if (done) ev.summary += fmt::format("; stop: {}", reason);
        ev.says(chain);
        ev.out(keys::token_id, static_cast<double>(te.token));
        ev.out(keys::token_piece, te.piece, "", "chosen token");
        ev.out(keys::token_prob, te.p, "", "its probability");
        ev.out(sixstep::keys::text, te.text, "", "new text");
        ev.out(keys::text_so_far, gen_->text());
        ev.out(keys::n_generated, static_cast<double>(te.index + 1), "tokens");
        ev.out(keys::sampler, std::string(forced ? "forced" : params_.sampling.temperature <= 0 ? "greedy" : "chain"));
        ev.out(keys::forced, std::string(forced ? "yes" : "no"), "", "chosen by hand");
        // The table the draw used: after the filters and the temperature.
        for (auto st = trace.stages.rbegin(); st != trace.stages.rend(); ++st)
            if (st->name != "dist" && !st->candidates.empty()) {
                ev.out(keys::final_top1_prob, st->candidates.front().p, "", "top candidate after the chain");
                break;
            }
        ev.out(keys::sampler_chain, chain);
        ev.out(keys::stop, std::string(done ? "yes" : "no"));
        ev.out(keys::stop_reason, reason);
        ev.out(keys::token_ms, te.dt_ms, "ms", "token latency");
        if (LlmView* v = model_.view()) {
            v->tokens.push_back(view_token(te.token, false, forced));
            if (!v->passes.empty()) {
                v->passes.back().sampled = true;
                v->passes.back().sample_ms = gen_->timings().sample_ms - sample_ms_before;
            }
            ViewNext& next = v->next;
            if (!forced) next.chain = view_chain(trace, false);
            next.sampled = !forced;
            next.forced = forced;
            next.chosen = te.token;
            next.chosen_piece = te.piece;
            next.chosen_p = te.p;
            next.chosen_rank = forced ? -1 : trace.chosen_rank;
            const GenerateTimings& clocks = gen_->result().timings;  // the clocks so far
            v->ttft_ms = clocks.ttft_ms;
            v->tpot_ms = clocks.tpot_ms;
        }
        return !done;
    }

    Response respond(TraceEvent& ev) override {
        const GenerateResult& r = gen_->result();
        const GenerateTimings& t = r.timings;
        Response resp;
        resp.text = r.text;
        // One token has no gap after the first: no TPOT, no decode speed
        // (they read 0 ms and 0 tok/s, a division by n − 1 = 0).
        const bool has_gaps = t.n_generated >= 2;
        ev.summary = has_gaps ? fmt::format("{}; TTFT {:.1f} ms, TPOT {:.1f} ms, total {:.1f} ms",
                                            count_of(static_cast<std::size_t>(t.n_generated), "token", "tokens"),
                                            t.ttft_ms, t.tpot_ms, t.total_ms)
                              : fmt::format("{}; TTFT {:.1f} ms, total {:.1f} ms",
                                            count_of(static_cast<std::size_t>(t.n_generated), "token", "tokens"),
                                            t.ttft_ms, t.total_ms);
        ev.out(sixstep::keys::text, r.text, "", "generated text");
        ev.out(keys::n_prompt, static_cast<double>(t.n_prompt), "tokens", "prompt tokens");
        ev.out(keys::n_generated, static_cast<double>(t.n_generated), "tokens", "generated tokens");
        ev.out(keys::stop_reason, std::string(stop_reason_name(r.stop_reason)));
        ev.out(keys::ttft_ms, t.ttft_ms, "ms", "time to first token");
        if (has_gaps) {
            ev.out(keys::tpot_ms, t.tpot_ms, "ms", "time per output token");
            ev.out(keys::tpot_p50_ms, t.tpot_p50_ms, "ms", "median time per output token");
        }
        ev.out(keys::total_ms, t.total_ms, "ms", "total");
        ev.out(keys::prefill_tok_s, t.prefill_tok_s(), "tok/s", "prefill speed");
        if (has_gaps) ev.out(keys::decode_tok_s, t.decode_tok_s(), "tok/s", "decode speed");
        ev.says(fmt::format("TTFT = tokenize + prefill + first sample = {:.1f} ms", t.ttft_ms));
        if (has_gaps) ev.says(fmt::format("TPOT = (total − TTFT) / (n − 1) = {:.1f} ms", t.tpot_ms));
        else ev.says("TPOT: none — one token, so no time between tokens (n − 1 = 0)");
        for (const auto& f : ev.outputs) resp.fields.push_back(f);
        if (LlmView* v = model_.view()) {
            v->ttft_ms = t.ttft_ms;
            v->tpot_ms = t.tpot_ms;
            v->tpot_p50_ms = has_gaps ? t.tpot_p50_ms : 0;
        }
        stepper_.reset();  // frees the sequence's KV blocks
        gen_.reset();
        if (LlmView* v = model_.view()) {
            v->finished = true;
            v->kv.released = true;
            // The pool as it is now; the bytes stay those the request's
            // blocks held at its last pass (what the lesson compares with
            // the formula), not the pool's 0 after it.
            const KvCacheStats st = model_.kv_cache().stats();
            v->kv.n_blocks_used = st.n_blocks_used;
            v->kv.n_blocks_free = st.n_blocks - st.n_blocks_used;
        }
        return resp;
    }

private:
    // ---- what the panels show (only while a view is set) ----
    ViewToken view_token(int id, bool prompt, bool forced) {
        const Vocab& vocab = model_.vocab();
        ViewToken t;
        t.id = id;
        t.piece = model_.codec().piece(id);
        t.raw = vocab.token_text(id);
        t.byte = vocab.token_type(id) == TokenType::Byte;
        t.special = vocab.is_control(id);
        t.prompt = prompt;
        t.forced = forced;
        return t;
    }

    void view_kv(ViewKv& kv, const KvCacheStats& st, int n_filled) {
        const LlamaHparams& hp = model_.llama().hparams();
        kv.n_layer = hp.n_layer;
        kv.n_head_kv = hp.n_head_kv;
        kv.head_dim = hp.head_dim();
        kv.bytes_per_value = static_cast<int>(st.bytes_per_token / (2ull * hp.n_layer * hp.n_head_kv * hp.head_dim()));
        kv.block_size = st.block_size;
        kv.n_blocks = st.n_blocks;
        kv.n_blocks_used = st.n_blocks_used;
        kv.n_ctx = model_.n_ctx();
        kv.n_filled = n_filled;
        kv.capacity_left = kv.n_ctx - n_filled;
        kv.n_blocks_free = st.n_blocks - st.n_blocks_used;
        kv.block_table = model_.kv_cache().block_table(gen_->seq());
        kv.bytes_per_token = st.bytes_per_token;
        kv.bytes_filled = st.bytes_per_token * static_cast<std::size_t>(n_filled);
        kv.bytes_used = st.bytes_used;
        kv.bytes_allocated = st.bytes_allocated;
        kv.bytes_capacity = st.bytes_total;
        kv.released = false;
    }

    std::vector<ViewCandidate> view_rows(const std::vector<Candidate>& cands) {
        std::vector<ViewCandidate> rows;
        for (const Candidate& c : cands) rows.push_back({c.id, model_.codec().piece(c.id), c.p, c.logit});
        return rows;
    }

    std::vector<ViewSamplerStage> view_chain(const SamplerTrace& trace, bool preview) {
        std::vector<ViewSamplerStage> chain;
        for (const SamplerStage& st : trace.stages) {
            if (preview && st.name == "dist") continue;  // a preview's draw is not the one that will happen
            chain.push_back({st.name, st.n_kept, view_rows(st.candidates)});
        }
        return chain;
    }

    // The candidates, and what each filter of the request's sampler keeps of
    // them — a preview until postprocess samples (the filters are
    // deterministic; only the final draw is random, and it is left out).
    void view_next(ViewNext& next, const std::vector<float>& logits, const std::vector<Candidate>& top) {
        next = ViewNext{};
        next.n_vocab = static_cast<int>(logits.size());
        next.top = view_rows(top);
        next.sampling = params_.sampling;
        SamplerTrace preview;
        preview.max_rows = std::max(1, params_.top_n);
        Sampler(params_.sampling).sample(logits, &preview);
        next.chain = view_chain(preview, true);
        if (const auto f = forced_.find(static_cast<int>(gen_->tokens().size())); f != forced_.end()) {
            next.to_force = f->second;
            next.to_force_piece = model_.codec().piece(f->second);
        }
    }

    LlmModel& model_;
    Request request_;
    GenerateParams params_;
    std::map<int, int> forced_;  // generated token index → the id chosen by hand
    std::vector<int> tokens_;
    double tokenize_ms_ = 0;
    std::unique_ptr<Generation> gen_;
    std::unique_ptr<Stepper> stepper_;
};

}  // namespace

std::unique_ptr<Job> LlmModel::start(const Request& request) { return std::make_unique<LlmJob>(*this, request); }

}  // namespace sixstep::llm
