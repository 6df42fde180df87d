// Vocab — a model's tokenizer, built from its GGUF metadata: text -> token
// ids (tokenize) and token ids -> bytes (token_to_piece, detokenize).
//
// Usage:
//   auto f = GGUFFile::open("model.gguf");
//   Vocab vocab = Vocab::from_gguf(f);
//   std::vector<TokenId> ids = vocab.tokenize("The cat sat", /*add_special=*/true);
//   std::string text = vocab.detokenize(ids);      // "The cat sat" (BOS not printed)
//
// Two tokenizer families, chosen by tokenizer.ggml.model:
//   "llama"  SentencePiece BPE (tokenizer_spm.cpp): spaces become "▁", a space
//            is added in front of the text, pieces merge by highest score,
//            and bytes with no token of their own become <0xNN> byte tokens.
//   "gpt2"   byte-level BPE (tokenizer_bpe.cpp): a pre-tokenizer splits words
//            (tokenizer.ggml.pre, pretokenizer.h), each byte is shown as a
//            printable character, and pieces merge by the rank of
//            tokenizer.ggml.merges.
// Special tokens (control tokens such as "<s>" or "<|endoftext|>") are found
// in the text only when parse_special is true; user-defined tokens always are.
// Decoding is exact: detokenize(tokenize(text)) == text for any bytes (for
// "llama", with the added leading space removed again).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/vocab/pretokenizer.h"

namespace sixstep::llm {

using TokenId = int32_t;

// tokenizer.ggml.token_type values (as in llama.cpp and sentencepiece).
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

enum class VocabType { SPM, BPE };

class Vocab {
public:
    // Reads tokenizer.ggml.* from the file. Throws sixstep::Error naming the
    // file and key for anything missing or inconsistent.
    static Vocab from_gguf(const GGUFFile& file);

    VocabType type() const { return type_; }
    const std::string& model() const { return model_; }  // "llama" or "gpt2"
    const std::string& pre() const { return pre_; }      // tokenizer.ggml.pre, "" if absent
    PreTokenizer pretokenizer() const { return pre_type_; }
    size_t n_tokens() const { return tokens_.size(); }

    // ---- tokens ----
    bool valid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < tokens_.size(); }
    const std::string& token_text(TokenId id) const;  // as stored ("▁the", "Ġthe", "<0x0A>"); throws if invalid
    float score(TokenId id) const;
    TokenType token_type(TokenId id) const;
    std::optional<TokenId> find(std::string_view text) const;  // exact token text -> id
    bool is_control(TokenId id) const { return valid(id) && token_type(id) == TokenType::Control; }
    // Control, user-defined or unknown: the tokens matched whole in the text.
    bool is_special(TokenId id) const;

    // ---- special ids (-1 when the model has none) ----
    TokenId bos() const { return bos_; }
    TokenId eos() const { return eos_; }
    TokenId unk() const { return unk_; }
    TokenId pad() const { return pad_; }
    bool add_bos() const { return add_bos_; }  // tokenize(add_special=true) prepends BOS
    bool add_eos() const { return add_eos_; }  // ... and appends EOS
    bool add_space_prefix() const { return add_space_prefix_; }
    // End of generation: EOS, or an end-of-turn token such as <|eot_id|>.
    bool is_eog(TokenId id) const;

    // ---- text -> ids ----
    // add_special: add BOS/EOS as the model asks (add_bos(), add_eos()).
    // parse_special: match control tokens written in the text ("<s>").
    // Long texts are tokenized in chunks of about kTokenizeChunkBytes, cut
    // only where no token can span the cut, so the ids are those of one
    // piece while memory stays that of a chunk. Ctrl+C (pipeline/core/
    // progress.h) stops it between chunks.
    std::vector<TokenId> tokenize(std::string_view text, bool add_special = true, bool parse_special = false) const;
    // The same with another chunk size (tests compare sizes; SIZE_MAX: one piece).
    std::vector<TokenId> tokenize(std::string_view text, bool add_special, bool parse_special, size_t chunk_bytes) const;
    static constexpr size_t kTokenizeChunkBytes = 64 * 1024;

    // ---- ids -> text ----
    // The bytes of one token: "▁" -> " " (llama), "Ġ" -> " " (gpt2), <0x0A>
    // -> "\n". Control tokens give their text when `special`, else nothing.
    // A piece may end in the middle of a UTF-8 character.
    std::string token_to_piece(TokenId id, bool special = true) const;
    // The piece of a token as it reads in a text: token_to_piece, less the
    // space an SPM tokenizer put in front of a text fragment when
    // `starts_fragment` (the token is the first, or follows a special token:
    // tokenize adds that space in both places). detokenize and the
    // streaming detokenizer both read pieces through this one rule.
    std::string text_piece(TokenId id, bool starts_fragment, bool special = true) const;
    // Concatenated text pieces (the space tokenize put in front of each text
    // fragment taken out again, see text_piece). remove_special drops the
    // BOS/EOS that tokenize(add_special=true) adds (only if the model adds
    // them); unparse_special prints control tokens.
    std::string detokenize(std::span<const TokenId> ids, bool remove_special = false,
                           bool unparse_special = true) const;

private:
    Vocab() = default;
    void build_indexes();
    // A raw-text fragment, or a special token found in the text.
    struct Fragment {
        TokenId token;          // -1 for raw text
        std::string_view text;  // the raw text (token == -1)
    };
    std::vector<Fragment> split_special(std::string_view text, bool parse_special) const;
    void tokenize_spm(std::string_view text, std::vector<TokenId>& out) const;   // tokenizer_spm.cpp
    void tokenize_bpe(std::string_view text, std::vector<TokenId>& out) const;   // tokenizer_bpe.cpp
    void bpe_word(std::string_view word, std::vector<TokenId>& out) const;       // tokenizer_bpe.cpp
    TokenId byte_token(uint8_t byte) const;  // <0xNN> (llama) or the mapped character (gpt2)
    size_t next_cut(std::string_view text, size_t from) const;  // where a long text may be cut (vocab.cpp)

    VocabType type_ = VocabType::SPM;
    std::string model_, pre_;
    PreTokenizer pre_type_ = PreTokenizer::GPT2;
    std::vector<std::string> tokens_;
    std::vector<float> scores_;
    std::vector<TokenType> types_;
    std::unordered_map<std::string, TokenId, GGUFStringHash, std::equal_to<>> token_to_id_;
    // merge ranks keyed by "left\0right" (byte-level tokens never contain NUL)
    std::unordered_map<std::string, int32_t, GGUFStringHash, std::equal_to<>> merge_rank_;
    std::vector<TokenId> specials_;  // control/user-defined/unknown tokens, longest text first
    std::vector<TokenId> byte_tokens_;  // byte -> token id, or -1
    std::vector<TokenId> eog_;
    TokenId bos_ = -1, eos_ = -1, unk_ = -1, pad_ = -1;
    bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;
    bool ignore_merges_ = false;  // llama3: a word that is a token is taken whole
    bool spm_cut_ok_ = false;     // SPM: no token holds "▁" after another character, so texts may be cut
};

}  // namespace sixstep::llm
