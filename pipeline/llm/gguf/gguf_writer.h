// GGUFWriter — builds a GGUF v3 file (layout: see gguf.h): metadata of every
// value type, tensors at aligned offsets, quantizing from f32 on request.
//
// Usage (a whole model):
//   GGUFWriter w;
//   w.set("general.architecture", "llama");
//   w.set("llama.block_count", uint32_t(2));
//   w.set("tokenizer.ggml.tokens", tokens);                      // std::vector<std::string>
//   w.add_tensor("token_embd.weight", GGMLType::F16, {n_embd, n_vocab}, embd);  // f32 in, f16 out
//   w.write("model.gguf");
//
// Tensors are stored in the order added; metadata keys in the order first set.
// The writer keeps the encoded bytes in memory until write().
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "pipeline/llm/gguf/gguf.h"

namespace sixstep::llm {

class GGUFWriter {
public:
    GGUFWriter() = default;

    // Sets (or replaces) a metadata value. The value's C++ type picks the GGUF
    // type: uint32_t -> u32, float -> f32, "text" -> str, std::vector<std::string> -> arr str.
    void set(std::string key, GGUFValue value);
    // Removes a key if present.
    void remove(std::string_view key);
    // Sets general.alignment (a power of two) and aligns tensor data to it.
    void set_alignment(uint32_t alignment);
    uint32_t alignment() const { return alignment_; }

    // Adds a tensor from f32 values (ne[0] innermost), converting to `type`
    // (F32, F16, Q8_0, Q4_0). data.size() must equal the product of ne.
    void add_tensor(std::string name, GGMLType type, std::vector<int64_t> ne, std::span<const float> data);
    // Adds a tensor whose bytes are already encoded in `type` (any known type);
    // bytes.size() must equal the type's size for ne.
    void add_tensor_raw(std::string name, GGMLType type, std::vector<int64_t> ne,
                        std::span<const uint8_t> bytes);

    size_t n_tensors() const { return tensors_.size(); }
    size_t n_kv() const { return kv_.size(); }

    // The whole file, as bytes.
    std::vector<uint8_t> to_bytes() const;
    // Writes the file (to a temporary name, then renames it into place).
    void write(const std::filesystem::path& path) const;

private:
    struct Tensor {
        std::string name;
        GGMLType type;
        std::vector<int64_t> ne;
        std::vector<uint8_t> bytes;
    };
    std::vector<uint8_t> head(std::vector<uint64_t>& offsets, uint64_t& data_size) const;
    void check_new_tensor(const std::string& name, GGMLType type, const std::vector<int64_t>& ne) const;

    uint32_t alignment_ = GGUF_DEFAULT_ALIGNMENT;
    std::vector<GGUFKeyValue> kv_;
    std::vector<Tensor> tensors_;
};

}  // namespace sixstep::llm
