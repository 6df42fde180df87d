// Pre-tokenizers: split text into "words" before byte-level BPE, so merges
// never cross a word boundary. Each one implements a regex from the model's
// original tokenizer, written out by hand (std::regex has no \p{L}); the
// regexes are quoted above each implementation in pretokenizer.cpp.
//
//   gpt-2   GPT-2, and the default for tokenizer.ggml.model "gpt2"
//   llama3  Llama 3 (tokenizer.ggml.pre "llama-bpe"): digits in groups of 3
//   qwen2   Qwen 2: like llama3, digits one at a time
#pragma once
#include <optional>
#include <string_view>
#include <vector>

namespace sixstep::llm {

enum class PreTokenizer { GPT2, LLAMA3, QWEN2 };

// tokenizer.ggml.pre -> pre-tokenizer; nullopt when sixstep does not know it.
// "default", "gpt-2", "gpt2" -> GPT2; "llama3", "llama-v3", "llama-bpe" ->
// LLAMA3; "qwen2" -> QWEN2.
std::optional<PreTokenizer> pretokenizer_from_name(std::string_view name);
std::string_view pretokenizer_name(PreTokenizer p);

// Splits text into consecutive, non-empty pieces that together are exactly
// the text (any bytes; invalid UTF-8 bytes count as "other" characters).
std::vector<std::string_view> pretokenize(std::string_view text, PreTokenizer p);

}  // namespace sixstep::llm
