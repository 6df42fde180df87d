// LlmModel: a GGUF Llama model behind the six-stage Model interface
// (pipeline/core/model.h), so the same Pipeline, trace, lessons and UI that
// walk the delivery-time model walk text generation too.
//
//   1 request      tokenize the prompt (ids and pieces); check it fits the context
//   2 load         map the GGUF once, build the backend (cold load time); later: "reused"
//   3 forward      iteration 0: prefill the prompt; then one decode step per iteration
//   4 output       logits → probabilities; the top-N table with token pieces
//   5 postprocess  sample with the chain; detokenize; stop? (true → back to forward)
//   6 respond      the text with TTFT, TPOT and total time
//
//     LlmModel model("assets/models/stories-3m-f16.gguf");
//     Request r;  r.set("prompt", "The cat sat on the");  r.set("max_tokens", "1");
//     Pipeline p(model, r);
//     p.run();   // p.trace().lookup("output.top1_piece") → " mat"
//
// Request fields: prompt (required), max_tokens (16), stop (optional string),
// force (tokens a person chose instead of the sampler: "0:412, 3:99", i.e.
// generated token index : token id), and the sampler's temperature, top_k,
// top_p, min_p, seed — their defaults are SamplerParams' (sampler.h), the one
// place they are written.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "pipeline/core/model.h"
#include "pipeline/llm/backend.h"

namespace sixstep::llm {

class Vocab;
class TextCodec;
struct LlmView;

struct LlmModelParams {
    BackendKind backend = BackendKind::cpu;  // where the forward pass runs (auto: a GPU when there is one)
    int n_threads = 0;     // CPU threads; <= 0 → the CPU backend's default
    int n_ctx = 0;         // context per request; <= 0 → the model's
    int top_n = 5;         // rows of the probability table in the output stage
    int max_tokens = 16;   // default for requests without max_tokens
};

// The request field "force": generated token index → the id a person chose.
// "0:412, 3:99" ↔ {0: 412, 3: 99}. parse_forced throws sixstep::Error for a
// malformed pair or an id outside 0..n_vocab−1.
std::map<int, int> parse_forced(const std::string& text, int n_vocab);
std::string format_forced(const std::map<int, int>& forced);

class LlmModel : public sixstep::Model {
public:
    explicit LlmModel(std::filesystem::path path, LlmModelParams params = {});
    ~LlmModel() override;

    std::string name() const override;
    bool loaded() const override { return backend_ != nullptr; }
    void load(TraceEvent& ev) override;
    std::uint64_t weights_checksum() const override;
    std::unique_ptr<Job> start(const Request& request) override;
    const ModelDescription& description() const override { return describe(); }

    // The kind's knobs (the request fields), paths and headlines
    // (llm_description.cpp). The LLM has no settings: sampling is per request.
    static const ModelDescription& describe();

    // For jobs and front ends (valid after the first request / load).
    const LlamaModel& llama() const;
    // The same weights, for another backend beside this one's (valid after load).
    std::shared_ptr<const LlamaModel> llama_shared() const { return llama_; }
    const TextCodec& codec();
    bool opened() const { return vocab_ != nullptr; }  // the file is mapped and its tokenizer read
    const Vocab& vocab();
    Backend& backend();
    KvCache& kv_cache();
    const LlmModelParams& params() const { return params_; }
    const std::filesystem::path& path() const { return path_; }  // the GGUF file, as given
    int n_ctx();
    // Layers and attention heads: the loaded weights', or (before loading)
    // the file's metadata, which opening reads without loading weights.
    struct AttentionShape {
        int n_layer = 0;
        int n_head = 0;
    };
    AttentionShape attention_shape();

    // Named intermediate tensors (Qcur, kq_soft_max, result_output, …) and
    // KV-fill events of every forward stage go to this observer (null: none,
    // and the forward pass pays nothing). The observer must outlive its use.
    void set_tensor_observer(TensorObserver* observer) { observer_ = observer; }
    TensorObserver* tensor_observer() const { return observer_; }

    // What the transformer panels show (llm_view.h): every request's stages
    // write it while it is set (null: none, and nothing is written). It must
    // outlive its use.
    void set_view(LlmView* view) { view_ = view; }
    LlmView* view() const { return view_; }

    // The token whose text is exactly `piece` (" rug"); throws sixstep::Error
    // with the nearest pieces when there is none.
    int token_of_piece(std::string_view piece);

private:
    void describe_shape(TraceEvent& ev);  // load's figures of the model: n_params, n_layer, …
    void open();  // maps the file and reads the tokenizer (cheap: metadata only)

    std::filesystem::path path_;
    LlmModelParams params_;
    struct Opened;
    std::unique_ptr<Opened> opened_;  // the mapped file + vocab, before load()
    std::shared_ptr<LlamaModel> llama_;
    std::shared_ptr<const Vocab> vocab_;
    std::unique_ptr<TextCodec> codec_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<KvCache> kv_;
    std::string backend_note_;  // why auto chose the CPU, said once at load
    double open_ms_ = 0;
    int warm_up_tokens_ = 0;     // the load's warm-up prefill (llm_model.cpp)
    double warm_up_ms_ = 0;
    std::string warm_up_note_;   // why there was none, when it failed
    TensorObserver* observer_ = nullptr;
    LlmView* view_ = nullptr;
};

}  // namespace sixstep::llm
