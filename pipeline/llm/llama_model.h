// LlamaModel: the hyperparameters and weights of a Llama-architecture model
// (general.architecture = "llama"), read from a GGUF file.
//
// Loading copies no weight: every matrix is a view (WeightMatrix) into the
// read-only memory map of the file, in whatever type the file stores (F32,
// F16, Q8_0, Q4_0), and only the small norm vectors are converted to float.
// When the first CPU forward pass is built, the matrices it multiplies are
// copied once into memory of the process's own, on huge pages where the
// kernel gives them (huge_page_buffer.h): F32 and F16 rows as they are,
// Q4_0 and Q8_0 rows interleaved (interleaved_rows.h). A model that only the
// GPU runs, or that is only inspected, pays neither the time nor the memory.
//
//     auto model = LlamaModel::load("model.gguf");   // shared_ptr; throws sixstep::Error
//     const LlamaHparams& hp = model->hparams();     // n_embd, n_layer, …
//
// Tensor names (GGUF/llama.cpp):
//     token_embd.weight                 [n_vocab, n_embd]   (ne = {n_embd, n_vocab})
//     blk.N.attn_norm.weight            [n_embd]
//     blk.N.attn_q.weight               [n_head·head_dim, n_embd]
//     blk.N.attn_k.weight / attn_v      [n_head_kv·head_dim, n_embd]
//     blk.N.attn_output.weight          [n_embd, n_head·head_dim]
//     blk.N.ffn_norm.weight             [n_embd]
//     blk.N.ffn_gate.weight / ffn_up    [n_ff, n_embd]
//     blk.N.ffn_down.weight             [n_embd, n_ff]
//     output_norm.weight                [n_embd]
//     output.weight                     [n_vocab, n_embd]  (absent → tied to token_embd)
// Shapes are written outermost first ([rows, cols]); ne[] is the reverse.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/core/huge_page_buffer.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/gguf/interleaved_rows.h"
#include "pipeline/llm/gguf/weight_matrix.h"

namespace sixstep::llm {

// The context when a file does not say (no llama.context_length): llama.cpp's old default.
inline constexpr std::uint32_t default_n_ctx = 2048;

struct LlamaHparams {
    int n_vocab = 0;              // tokens in the vocabulary
    int n_ctx = 0;                // context length the model was trained for (llama.context_length)
    int n_embd = 0;               // width of the residual stream
    int n_layer = 0;              // transformer blocks
    int n_head = 0;               // query heads
    int n_head_kv = 0;            // key/value heads (GQA: n_head is a multiple of it)
    int n_ff = 0;                 // hidden width of the feed-forward block
    int n_rot = 0;                // dimensions of each head that RoPE rotates (usually head_dim)
    float rope_freq_base = 10000.0f;  // RoPE base θ
    float f_norm_rms_eps = 1e-5f;     // RMSNorm ε

    int head_dim() const { return n_embd / n_head; }
    int n_embd_kv() const { return n_head_kv * head_dim(); }  // width of K and V
    int n_gqa() const { return n_head / n_head_kv; }          // query heads per K/V head
};

struct LlamaLayer {
    std::vector<float> attn_norm;  // [n_embd]
    WeightMatrix wq, wk, wv, wo;
    std::vector<float> ffn_norm;   // [n_embd]
    WeightMatrix ffn_gate, ffn_up, ffn_down;
};

struct LlamaWeights {
    WeightMatrix token_embd;        // [n_vocab, n_embd]
    std::vector<LlamaLayer> layers;
    std::vector<float> output_norm;  // [n_embd]
    WeightMatrix output;            // [n_vocab, n_embd]; == token_embd when tied
    bool tied_output = false;
};

// The CPU's copy of the weights, in bytes.
struct CpuWeightsMemory {
    std::size_t bytes = 0;            // copied (F32, F16) or interleaved (Q4_0, Q8_0)
    std::size_t huge_page_bytes = 0;  // of those, on huge pages now
};

class LlamaModel {
public:
    // Opens (memory-maps) and validates a GGUF file. Errors name the file and
    // the tensor or key: "model.gguf: tensor blk.0.attn_k.weight: shape …".
    static std::shared_ptr<LlamaModel> load(const std::filesystem::path& path);
    // Takes an already opened file.
    static std::shared_ptr<LlamaModel> from_gguf(GGUFFile file);

    const LlamaHparams& hparams() const { return hp_; }
    const LlamaWeights& weights() const { return w_; }
    const GGUFFile& file() const { return file_; }
    // The type most matrices are stored in ("f32", "f16", "q8_0", …).
    GGMLType main_type() const { return w_.layers.empty() ? w_.token_embd.type : w_.layers[0].wq.type; }
    std::uint64_t n_params() const { return file_.n_params(); }

    // Copies the embedding of one token (dequantized) into out[n_embd].
    void embed(int token, float* out) const;

    // A hash of every byte of tensor data (see GGUFFile::tensor_data_checksum).
    std::uint64_t weights_checksum() const { return file_.tensor_data_checksum(); }

    // Copies every matrix a forward pass multiplies (all but the embedding
    // table, which is only looked up; a tied output gets its own) into one
    // buffer on huge pages, once: F32 and F16 rows as they are
    // (WeightMatrix::cpu_copy), Q4_0 and Q8_0 rows interleaved
    // (WeightMatrix::interleaved). As much memory as the matrices take
    // (110M F32: 418 MiB, copied in 30–130 ms on a 2-vCPU Zen 5, plus the
    // time the kernel takes to find that much fresh memory). The CPU's
    // forward pass calls it when it is built; any thread may, and later
    // calls return at once. Until then both fields are null, which the
    // matmuls also handle (the mapping's rows as stored). SIXSTEP_WEIGHTS=
    // mapped leaves F32 and F16 in the mapping and puts the interleaved rows
    // on plain pages, to measure the difference; any other value but
    // "copied" throws sixstep::Error.
    void prepare_for_cpu() const;
    // The buffer prepare_for_cpu() made (it calls it first).
    CpuWeightsMemory cpu_weights_memory() const;

private:
    explicit LlamaModel(GGUFFile file) : file_(std::move(file)) {}
    void init();

    GGUFFile file_;
    LlamaHparams hp_;
    LlamaWeights w_;
    // prepare_for_cpu()'s: it fills `cpu_copy` and `interleaved` in w_'s
    // matrices (fields no one reads before it has run once) and keeps the
    // copies here.
    mutable std::once_flag cpu_once_;
    mutable HugePageBuffer cpu_rows_;
};

// Bytes of weights one decode step reads: every layer's matrices and norms,
// the final norm, the output head, and one row of the embedding table. Decode
// cannot run faster than memory bandwidth ÷ this (the KV cache, read on top,
// grows with the context).
std::uint64_t decode_weight_bytes(const LlamaModel& model);

}  // namespace sixstep::llm
