// Random-weight Llama models written as GGUF files, for tests and benchmarks.
//
// The weights mean nothing, but the file is a complete Llama model that any
// GGUF reader accepts (llama.cpp included), with a byte-level BPE ("gpt2")
// vocabulary: the 256 byte tokens, an end-of-text token, then unused filler
// up to n_vocab. Identical parameters and seed give identical bytes.
//
//     RandomModelParams p = random_model_preset("15m");
//     p.type = GGMLType::Q8_0;
//     write_random_model("/tmp/r15m-q8_0.gguf", p);
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/llm/gguf/ggml_type.h"

namespace sixstep::llm {

struct RandomModelParams {
    int n_vocab = 512;     // >= 257 (256 byte tokens + end of text)
    int n_ctx = 256;       // llama.context_length
    int n_embd = 64;       // multiple of n_head (and of 32 for quantized types)
    int n_layer = 2;
    int n_head = 4;
    int n_head_kv = 2;     // divides n_head
    int n_ff = 128;
    float rope_freq_base = 10000.0f;
    float f_norm_rms_eps = 1e-5f;
    bool tied_output = false;            // no output.weight: the head reuses token_embd
    GGMLType type = GGMLType::F32;       // type of the 2-D matrices (norms stay F32)
    std::uint64_t seed = 1;
    std::string name = "random";         // general.name
    // Non-empty: copy the vocabulary (every tokenizer.* key) from this GGUF
    // file and take its size as n_vocab — a random model that speaks the
    // same tokens, e.g. a draft that disagrees with its target.
    std::filesystem::path vocab_from;
};

// Presets: "tiny" (tests), "15m" and "110m" (llama2.c's stories15M/110M shapes:
// vocabulary 32000, output head tied to the embedding), "1b" (TinyLlama-1.1B's
// shape: GQA, untied head; for GPU benchmarks). Throws sixstep::Error for an
// unknown name.
RandomModelParams random_model_preset(const std::string& name);

// Writes the model. Throws sixstep::Error on bad parameters or I/O errors.
void write_random_model(const std::filesystem::path& path, const RandomModelParams& params);
// The same file's bytes, for a model that lives only in memory
// (GGUFFile::from_bytes, LlamaModel::from_gguf).
std::vector<std::uint8_t> random_model_bytes(const RandomModelParams& params);

// The model of a preset (seed 1) in this user's private folder of the
// temporary one (sixstep-UID, mode 0700), written the first time and reused
// after while its shape and type are the preset's (identical parameters give
// identical bytes): for a
// lesson that needs a model larger than the CPU's caches without shipping
// one. Written under another name and renamed, so a reader never sees half a
// file. Throws sixstep::Error for an unknown preset or an I/O error.
std::filesystem::path cached_random_model(const std::string& preset, GGMLType type = GGMLType::F32);

// The GPT-2 byte-level alphabet: byte b is written as the code point
// byte_to_unicode(b) (printable bytes map to themselves; others are shifted
// past U+0100 so that every token is printable text). Returned as UTF-8.
std::string byte_level_piece(unsigned char b);

}  // namespace sixstep::llm
