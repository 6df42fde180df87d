#include "pipeline/llm/llama_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "pipeline/core/env_choice.h"
#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"

namespace sixstep::llm {

std::shared_ptr<LlamaModel> LlamaModel::load(const std::filesystem::path& path) {
    return from_gguf(GGUFFile::open(path));
}

std::shared_ptr<LlamaModel> LlamaModel::from_gguf(GGUFFile file) {
    std::shared_ptr<LlamaModel> m(new LlamaModel(std::move(file)));
    try {
        m->init();
    } catch (const Error& e) {
        throw e.with_context(fmt::format("error loading model {}", m->file_.name()));
    }
    return m;
}

namespace {

// A size from the file's metadata, read and checked in one place (the key
// named once): at least 1, at most 2^24. `fallback`: the value when absent.
int positive_u32(const GGUFFile& f, const std::string& key, std::optional<std::uint32_t> fallback = std::nullopt) {
    const std::uint32_t v = fallback ? f.get_u32(key, *fallback) : f.get_u32(key);
    if (v == 0 || v > (1u << 24)) throw Error(fmt::format("key {}: invalid value {}", key, v));
    return static_cast<int>(v);
}

const GGUFTensorInfo& tensor(const GGUFFile& f, const std::string& name) {
    const GGUFTensorInfo* t = f.find_tensor(name);
    if (!t) throw Error(fmt::format("missing tensor {}", name));
    return *t;
}

// A 2-D matrix of `rows` outputs × `cols` inputs (ne = {cols, rows}).
WeightMatrix matrix(const GGUFFile& f, const std::string& name, int rows, int cols) {
    const GGUFTensorInfo& t = tensor(f, name);
    if (t.n_dims != 2 || t.ne[0] != cols || t.ne[1] != rows)
        throw Error(fmt::format("tensor {}: shape {} but expected [{}, {}] (ne[0] = {} inputs, ne[1] = {} outputs)",
                                name, t.shape_str(), cols, rows, cols, rows));
    ggml_require_supported(t.type, "tensor " + name);
    WeightMatrix w;
    w.type = t.type;
    w.data = t.data;
    w.n_rows = rows;
    w.n_cols = cols;
    w.row_bytes = t.row_bytes();
    return w;
}

std::vector<float> vector(const GGUFFile& f, const std::string& name, int n) {
    const GGUFTensorInfo& t = tensor(f, name);
    if (t.n_elements() != n || t.ne[0] != n)
        throw Error(fmt::format("tensor {}: shape {} but expected [{}]", name, t.shape_str(), n));
    std::vector<float> v = t.to_f32();
    for (int i = 0; i < n; ++i)
        if (!std::isfinite(v[static_cast<size_t>(i)]))
            throw Error(fmt::format("tensor {}: element {} is {}; every weight must be a finite number", name, i,
                                    v[static_cast<size_t>(i)]));
    return v;
}

// ---- finite weights --------------------------------------------------------------
// One NaN or inf among the weights turns every logit into NaN, and the model
// would print garbage with exit code 0. So every matrix is read once at load:
// for F32 and F16 every value, for Q8_0 and Q4_0 each block's F16 scale (the
// 8- and 4-bit quants are small integers, always finite). A value is not
// finite when its exponent bits are all ones. The scan runs at memory speed
// (a 438 MB F32 file in a fraction of a second), in chunks, so progress
// shows and Ctrl+C stops it.

// Index of the first of n values (each `stride` bytes apart, the bits of
// interest masked by `mask`) whose exponent is all ones, or n.
template <typename Word>
std::size_t first_not_finite(const std::uint8_t* p, std::size_t n, std::size_t stride, Word mask) {
    constexpr std::size_t chunk = 4096;
    for (std::size_t begin = 0; begin < n; begin += chunk) {
        const std::size_t end = std::min(n, begin + chunk);
        // Branch-free counts over the chunk, so the compiler vectorizes them;
        // the contiguous case separately, since a constant stride is what it
        // vectorizes best (110M F32 values: ~90 ms instead of ~260).
        unsigned bad = 0;
        if (stride == sizeof(Word)) {
            for (std::size_t i = begin; i < end; ++i) {
                Word w;
                std::memcpy(&w, p + i * sizeof(Word), sizeof w);
                bad += (w & mask) == mask;
            }
        } else {
            for (std::size_t i = begin; i < end; ++i) {
                Word w;
                std::memcpy(&w, p + i * stride, sizeof w);
                bad += (w & mask) == mask;
            }
        }
        if (bad == 0) continue;
        for (std::size_t i = begin; i < end; ++i) {
            Word w;
            std::memcpy(&w, p + i * stride, sizeof w);
            if ((w & mask) == mask) return i;
        }
    }
    return n;
}

void check_finite(const WeightMatrix& w, const std::string& name, std::uint64_t& done, std::uint64_t total) {
    const std::size_t n_cols = static_cast<std::size_t>(w.n_cols);
    // Rows at a time: about 16 MiB between progress reports.
    const std::size_t rows_per_chunk = std::max<std::size_t>(1, (16u << 20) / w.row_bytes);
    for (std::size_t r0 = 0; r0 < static_cast<std::size_t>(w.n_rows); r0 += rows_per_chunk) {
        report_progress("checking the weights (MiB)", done >> 20, total >> 20);
        const std::size_t rows = std::min(rows_per_chunk, static_cast<std::size_t>(w.n_rows) - r0);
        const std::uint8_t* p = static_cast<const std::uint8_t*>(w.data) + r0 * w.row_bytes;
        std::size_t bad = 0, n = 0;
        std::string what = "value";
        switch (w.type) {
            case GGMLType::F32:
                n = rows * n_cols;
                bad = first_not_finite<std::uint32_t>(p, n, 4, 0x7f800000u);
                break;
            case GGMLType::F16:
                n = rows * n_cols;
                bad = first_not_finite<std::uint16_t>(p, n, 2, 0x7c00u);
                break;
            case GGMLType::Q8_0:
            case GGMLType::Q4_0: {
                const std::size_t block_bytes = w.type == GGMLType::Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
                n = rows * (w.row_bytes / block_bytes);
                bad = first_not_finite<std::uint16_t>(p, n, block_bytes, 0x7c00u);  // the scale d comes first
                what = "block scale";
                break;
            }
            default: return;  // matrix() admits only the types above
        }
        if (bad < n) {
            const std::size_t per_row = n / rows;
            const std::size_t row = r0 + bad / per_row, col = bad % per_row;
            throw Error(fmt::format("tensor {}: the {} at row {}, {} {} is not a finite number; every weight must be "
                                    "(the file is damaged or was written wrong)",
                                    name, what, row, what == "value" ? "column" : "block", col));
        }
        done += rows * w.row_bytes;
    }
}

// A layer's matrices, by the last part of their tensor names.
std::array<std::pair<const char*, WeightMatrix*>, 7> layer_matrices(LlamaLayer& l) {
    return {{{"attn_q", &l.wq}, {"attn_k", &l.wk}, {"attn_v", &l.wv}, {"attn_output", &l.wo},
             {"ffn_gate", &l.ffn_gate}, {"ffn_up", &l.ffn_up}, {"ffn_down", &l.ffn_down}}};
}

}  // namespace

void LlamaModel::init() {
    const GGUFFile& f = file_;
    const std::string arch = f.architecture();
    if (arch != "llama")
        throw Error(fmt::format("general.architecture is \"{}\" but sixstep runs only \"llama\"", arch));

    LlamaHparams& hp = hp_;
    hp.n_embd = positive_u32(f, "llama.embedding_length");
    hp.n_layer = positive_u32(f, "llama.block_count");
    hp.n_head = positive_u32(f, "llama.attention.head_count");
    hp.n_head_kv = positive_u32(f, "llama.attention.head_count_kv", static_cast<std::uint32_t>(hp.n_head));
    hp.n_ff = positive_u32(f, "llama.feed_forward_length");
    hp.n_ctx = positive_u32(f, "llama.context_length", default_n_ctx);
    hp.rope_freq_base = f.get_f32("llama.rope.freq_base", 10000.0f);
    hp.f_norm_rms_eps = f.get_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    if (hp.n_embd % hp.n_head != 0)
        throw Error(fmt::format("n_embd {} is not a multiple of n_head {}", hp.n_embd, hp.n_head));
    if (hp.n_head % hp.n_head_kv != 0)
        throw Error(fmt::format("n_head {} is not a multiple of n_head_kv {}", hp.n_head, hp.n_head_kv));
    hp.n_rot = static_cast<int>(f.get_u32("llama.rope.dimension_count", static_cast<std::uint32_t>(hp.head_dim())));
    if (hp.n_rot <= 0 || hp.n_rot > hp.head_dim() || hp.n_rot % 2 != 0)
        throw Error(fmt::format("llama.rope.dimension_count {} must be even and at most head_dim {}", hp.n_rot,
                                hp.head_dim()));
    // Finite as well: an infinite epsilon divides every activation to 0 and
    // the model writes NULs; an infinite base stops every rotation.
    if (!(hp.rope_freq_base > 0) || !std::isfinite(hp.rope_freq_base))
        throw Error(fmt::format("llama.rope.freq_base {} must be a finite number > 0", hp.rope_freq_base));
    if (!(hp.f_norm_rms_eps >= 0) || !(hp.f_norm_rms_eps < 1))
        throw Error(fmt::format("RMSNorm epsilon {} must be >= 0 and below 1 (llama.attention.layer_norm_rms_epsilon; "
                                "models use about 1e-5)",
                                hp.f_norm_rms_eps));
    // Nine tensors a layer: a block count the file cannot hold is refused
    // before a layer table is made for it (2^24 layers took 6 GB to find the
    // fifth missing).
    if (const std::size_t held = f.tensors().size(); static_cast<std::size_t>(hp.n_layer) * 9 > held)
        throw Error(fmt::format("llama.block_count {} needs {} layer tensors (9 a layer), but the file holds {} tensors in "
                                "all",
                                hp.n_layer, static_cast<std::size_t>(hp.n_layer) * 9, held));

    const GGUFTensorInfo& embd = tensor(f, "token_embd.weight");
    if (embd.n_dims != 2 || embd.ne[0] != hp.n_embd)
        throw Error(fmt::format("tensor token_embd.weight: shape {} but expected [{}, n_vocab]", embd.shape_str(),
                                hp.n_embd));
    hp.n_vocab = static_cast<int>(embd.ne[1]);
    if (const auto v = f.find_u32("llama.vocab_size"); v && static_cast<int>(*v) != hp.n_vocab)
        throw Error(fmt::format("llama.vocab_size {} disagrees with token_embd.weight ({} rows)", *v, hp.n_vocab));
    // The tokenizer's ids index the embedding and the output rows: a vocabulary
    // of another size would read past them, or never produce some tokens.
    if (const GGUFValue* tokens = f.find("tokenizer.ggml.tokens"); tokens && tokens->is_array() &&
                                                                    tokens->size() != static_cast<size_t>(hp.n_vocab))
        throw Error(fmt::format("the vocabulary has {} tokens (tokenizer.ggml.tokens) but token_embd.weight has {} "
                                "rows: the tokenizer and the weights do not belong together",
                                tokens->size(), hp.n_vocab));

    const int hd = hp.head_dim();
    w_.token_embd = matrix(f, "token_embd.weight", hp.n_vocab, hp.n_embd);
    w_.layers.resize(hp.n_layer);
    for (int i = 0; i < hp.n_layer; ++i) {
        const std::string p = fmt::format("blk.{}.", i);
        LlamaLayer& l = w_.layers[i];
        l.attn_norm = vector(f, p + "attn_norm.weight", hp.n_embd);
        l.wq = matrix(f, p + "attn_q.weight", hp.n_head * hd, hp.n_embd);
        l.wk = matrix(f, p + "attn_k.weight", hp.n_head_kv * hd, hp.n_embd);
        l.wv = matrix(f, p + "attn_v.weight", hp.n_head_kv * hd, hp.n_embd);
        l.wo = matrix(f, p + "attn_output.weight", hp.n_embd, hp.n_head * hd);
        l.ffn_norm = vector(f, p + "ffn_norm.weight", hp.n_embd);
        l.ffn_gate = matrix(f, p + "ffn_gate.weight", hp.n_ff, hp.n_embd);
        l.ffn_up = matrix(f, p + "ffn_up.weight", hp.n_ff, hp.n_embd);
        l.ffn_down = matrix(f, p + "ffn_down.weight", hp.n_embd, hp.n_ff);
    }
    w_.output_norm = vector(f, "output_norm.weight", hp.n_embd);
    if (f.find_tensor("output.weight")) {
        w_.output = matrix(f, "output.weight", hp.n_vocab, hp.n_embd);
    } else {
        w_.output = w_.token_embd;
        w_.tied_output = true;
    }

    // Every matrix, by name; the norms were checked as they were converted.
    std::vector<std::pair<std::string, WeightMatrix*>> all{{"token_embd.weight", &w_.token_embd}};
    for (int i = 0; i < hp.n_layer; ++i) {
        LlamaLayer& l = w_.layers[static_cast<size_t>(i)];
        const std::string p = fmt::format("blk.{}.", i);
        for (const auto& [n, m] : layer_matrices(l)) all.emplace_back(p + n + ".weight", m);
    }
    if (!w_.tied_output) all.emplace_back("output.weight", &w_.output);
    std::uint64_t total = 0, done = 0;
    for (const auto& [name, m] : all) total += static_cast<std::uint64_t>(m->n_rows) * m->row_bytes;
    for (const auto& [name, m] : all) check_finite(*m, name, done, total);
    clear_progress();
}

void LlamaModel::prepare_for_cpu() const {
    std::call_once(cpu_once_, [this] {
        // The model is made non-const (load(), from_gguf()) and handed out
        // as const; cpu_copy and interleaved are a cache of its rows.
        LlamaWeights& w = const_cast<LlamaWeights&>(w_);
        std::vector<WeightMatrix*> all;
        for (LlamaLayer& l : w.layers)
            for (const auto& [name, m] : layer_matrices(l)) all.push_back(m);
        all.push_back(&w.output);  // a tied output gets its own: the embedding is only looked up
        // SIXSTEP_WEIGHTS=mapped: F32 and F16 read from the file's mapping,
        // the interleaved rows on plain pages (what the copy is measured against).
        const bool copy = env_choice("SIXSTEP_WEIGHTS", {"copied", "mapped"}) == "copied";
        const auto is_float = [](const WeightMatrix& m) { return !ggml_traits(m.type).quantized; };
        // Each matrix's bytes in one buffer, from a cache line: its rows as
        // they are (F32, F16) or interleaved (Q4_0, Q8_0).
        std::vector<std::size_t> bytes(all.size()), at(all.size());
        std::size_t total = 0;
        for (std::size_t i = 0; i < all.size(); ++i) {
            const WeightMatrix& m = *all[i];
            bytes[i] = is_float(m) ? (copy ? m.bytes() : 0) : interleaved_bytes(m);
            at[i] = total;
            total += (bytes[i] + cache_line_bytes - 1) / cache_line_bytes * cache_line_bytes;
        }
        cpu_rows_ = HugePageBuffer(total, copy);
        for (std::size_t i = 0; i < all.size(); ++i) {
            WeightMatrix& m = *all[i];
            if (bytes[i] == 0) continue;
            std::uint8_t* dst = cpu_rows_.data() + at[i];
            if (is_float(m)) {
                std::memcpy(dst, m.data, bytes[i]);
                m.cpu_copy = dst;
            } else {
                interleave_rows(m, dst);
                m.interleaved = dst;
            }
        }
    });
}

CpuWeightsMemory LlamaModel::cpu_weights_memory() const {
    prepare_for_cpu();
    return {cpu_rows_.size(), cpu_rows_.huge_page_bytes()};
}

void LlamaModel::embed(int token, float* out) const {
    if (token < 0 || token >= hp_.n_vocab)
        throw Error(fmt::format("token id {} is outside the vocabulary (0..{})", token, hp_.n_vocab - 1));
    dequantize_row(w_.token_embd.type, w_.token_embd.row(token), out, hp_.n_embd);
}

std::uint64_t decode_weight_bytes(const LlamaModel& model) {
    const LlamaWeights& w = model.weights();
    const std::uint64_t norm = sizeof(float) * static_cast<std::uint64_t>(model.hparams().n_embd);
    std::uint64_t n = w.token_embd.row_bytes + norm + w.output.bytes();
    for (const LlamaLayer& L : w.layers)
        n += 2 * norm + L.wq.bytes() + L.wk.bytes() + L.wv.bytes() + L.wo.bytes() + L.ffn_gate.bytes() +
             L.ffn_up.bytes() + L.ffn_down.bytes();
    return n;
}

}  // namespace sixstep::llm
