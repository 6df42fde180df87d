// Vocab: loading tokenizer.ggml.* from GGUF, special-token splitting, and
// decoding (see vocab.h). The two merge algorithms live in tokenizer_spm.cpp
// and tokenizer_bpe.cpp.
#include "pipeline/llm/vocab/vocab.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"
#include "pipeline/llm/vocab/unicode.h"

namespace sixstep::llm {

namespace {
int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}
// "<0x0A>" -> 10; -1 if the text is not a byte token.
int parse_byte_token(const std::string& text) {
    if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return -1;
    const int hi = hex_digit(text[3]), lo = hex_digit(text[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}
}  // namespace

Vocab Vocab::from_gguf(const GGUFFile& f) {
    Vocab v;
    try {
        v.model_ = f.get_str("tokenizer.ggml.model");
        if (v.model_ == "llama") {
            v.type_ = VocabType::SPM;
        } else if (v.model_ == "gpt2") {
            v.type_ = VocabType::BPE;
        } else {
            throw Error(fmt::format("tokenizer.ggml.model \"{}\" is not supported (sixstep knows \"llama\" and "
                                    "\"gpt2\")",
                                    v.model_));
        }
        v.tokens_ = f.get_arr_str("tokenizer.ggml.tokens");
        const size_t n = v.tokens_.size();
        if (n == 0) throw Error("tokenizer.ggml.tokens is empty");
        if (n > static_cast<size_t>(INT32_MAX)) throw Error("tokenizer.ggml.tokens has too many tokens");

        if (f.has("tokenizer.ggml.scores")) {
            v.scores_ = f.get_arr_f32("tokenizer.ggml.scores");
            if (v.scores_.size() != n)
                throw Error(fmt::format("tokenizer.ggml.scores has {} entries for {} tokens", v.scores_.size(), n));
        } else {
            v.scores_.assign(n, 0.0f);
        }
        v.types_.assign(n, TokenType::Normal);
        if (f.has("tokenizer.ggml.token_type")) {
            const auto types = f.get_arr_i32("tokenizer.ggml.token_type");
            if (types.size() != n)
                throw Error(fmt::format("tokenizer.ggml.token_type has {} entries for {} tokens", types.size(), n));
            for (size_t i = 0; i < n; ++i) {
                if (types[i] < 0 || types[i] > 6)
                    throw Error(fmt::format("tokenizer.ggml.token_type[{}] = {} is not a token type", i, types[i]));
                v.types_[i] = static_cast<TokenType>(types[i]);
            }
        }

        if (v.type_ == VocabType::BPE) {
            const std::string pre = f.get_str("tokenizer.ggml.pre", "default");
            v.pre_ = pre;
            const auto p = pretokenizer_from_name(pre);
            if (!p)
                throw Error(fmt::format("tokenizer.ggml.pre \"{}\" is not supported (sixstep knows gpt-2, llama-bpe/"
                                        "llama3 and qwen2)",
                                        pre));
            v.pre_type_ = *p;
            v.ignore_merges_ = *p == PreTokenizer::LLAMA3;
            const auto merges = f.get_arr_str("tokenizer.ggml.merges");
            v.merge_rank_.reserve(merges.size());
            for (size_t i = 0; i < merges.size(); ++i) {
                const std::string& m = merges[i];
                const size_t sp = m.find(' ', 1);
                if (sp == std::string::npos || sp + 1 >= m.size())
                    throw Error(fmt::format("tokenizer.ggml.merges[{}] = \"{}\" is not \"left right\"", i, m));
                std::string key = m.substr(0, sp);
                key += '\0';
                key.append(m, sp + 1, std::string::npos);
                v.merge_rank_.emplace(std::move(key), static_cast<int32_t>(i));  // first (lowest rank) wins
            }
            v.add_bos_ = false;
            v.add_space_prefix_ = false;
        } else {
            v.pre_ = f.get_str("tokenizer.ggml.pre", "");
            v.add_bos_ = true;
            v.add_space_prefix_ = true;
            v.unk_ = 0;
            v.bos_ = 1;
            v.eos_ = 2;
        }
        v.add_bos_ = f.get_bool("tokenizer.ggml.add_bos_token", v.add_bos_);
        v.add_eos_ = f.get_bool("tokenizer.ggml.add_eos_token", false);
        v.add_space_prefix_ = f.get_bool("tokenizer.ggml.add_space_prefix", v.add_space_prefix_);

        auto special_id = [&](const char* key, TokenId fallback) -> TokenId {
            if (!f.has(key)) return fallback < static_cast<TokenId>(n) ? fallback : -1;
            const uint32_t id = f.get_u32(key);
            if (id >= n) throw Error(fmt::format("{} = {} is not a token (the vocabulary has {})", key, id, n));
            return static_cast<TokenId>(id);
        };
        v.bos_ = special_id("tokenizer.ggml.bos_token_id", v.bos_);
        v.eos_ = special_id("tokenizer.ggml.eos_token_id", v.eos_);
        v.unk_ = special_id("tokenizer.ggml.unknown_token_id", v.unk_);
        v.pad_ = special_id("tokenizer.ggml.padding_token_id", v.pad_);
        const TokenId eot = special_id("tokenizer.ggml.eot_token_id", -1);
        if (v.add_bos_ && v.bos_ < 0) throw Error("tokenizer.ggml.add_bos_token is true but there is no BOS token");
        if (v.add_eos_ && v.eos_ < 0) throw Error("tokenizer.ggml.add_eos_token is true but there is no EOS token");
        if (v.eos_ >= 0) v.eog_.push_back(v.eos_);
        if (eot >= 0 && eot != v.eos_) v.eog_.push_back(eot);
        v.build_indexes();
    } catch (const Error& e) {
        // the GGUF getters already name the file; say it once
        std::string msg = e.message();
        if (msg.rfind(f.name() + ": ", 0) == 0) msg.erase(0, f.name().size() + 2);
        throw Error(fmt::format("{}: error loading the vocabulary: {}", f.name(), msg));
    }
    return v;
}

void Vocab::build_indexes() {
    token_to_id_.reserve(tokens_.size());
    for (size_t i = 0; i < tokens_.size(); ++i)
        token_to_id_.emplace(tokens_[i], static_cast<TokenId>(i));  // a duplicate text keeps its first id

    // special tokens are matched in the text longest first, so "<|endoftext|>"
    // wins over a shorter special that is its prefix
    for (size_t i = 0; i < tokens_.size(); ++i) {
        const TokenType t = types_[i];
        if ((t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) && !tokens_[i].empty())
            specials_.push_back(static_cast<TokenId>(i));
    }
    std::stable_sort(specials_.begin(), specials_.end(),
                     [&](TokenId a, TokenId b) { return tokens_[a].size() > tokens_[b].size(); });

    // SPM texts may be cut before a space (next_cut) unless some token holds
    // "▁" right after another character ("a▁b"): a merge could span the cut.
    spm_cut_ok_ = true;
    for (const std::string& t : tokens_)
        for (size_t at = t.find("\xe2\x96\x81", 1); at != std::string::npos; at = t.find("\xe2\x96\x81", at + 1))
            if (at < 3 || t.compare(at - 3, 3, "\xe2\x96\x81") != 0) spm_cut_ok_ = false;

    byte_tokens_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
        if (type_ == VocabType::SPM) {
            if (auto id = find(fmt::format("<0x{:02X}>", b))) byte_tokens_[b] = *id;
        } else {
            if (auto id = find(gpt2_byte_to_utf8(static_cast<uint8_t>(b)))) byte_tokens_[b] = *id;
        }
    }
}

const std::string& Vocab::token_text(TokenId id) const {
    if (!valid(id)) throw Error(fmt::format("token id {} is out of range (the vocabulary has {})", id, tokens_.size()));
    return tokens_[static_cast<size_t>(id)];
}

float Vocab::score(TokenId id) const {
    token_text(id);  // range check
    return scores_[static_cast<size_t>(id)];
}

TokenType Vocab::token_type(TokenId id) const {
    token_text(id);  // range check
    return types_[static_cast<size_t>(id)];
}

std::optional<TokenId> Vocab::find(std::string_view text) const {
    auto it = token_to_id_.find(text);
    if (it == token_to_id_.end()) return std::nullopt;
    return it->second;
}

bool Vocab::is_special(TokenId id) const {
    if (!valid(id)) return false;
    const TokenType t = types_[static_cast<size_t>(id)];
    return t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown;
}

bool Vocab::is_eog(TokenId id) const { return std::find(eog_.begin(), eog_.end(), id) != eog_.end(); }

TokenId Vocab::byte_token(uint8_t byte) const { return byte_tokens_[byte]; }

// ---- tokenize ----------------------------------------------------------------------

std::vector<Vocab::Fragment> Vocab::split_special(std::string_view text, bool parse_special) const {
    std::vector<Fragment> frags{{-1, text}};
    for (TokenId id : specials_) {
        const TokenType t = types_[static_cast<size_t>(id)];
        if (!parse_special && t != TokenType::UserDefined) continue;  // only user-defined tokens are always matched
        const std::string& needle = tokens_[static_cast<size_t>(id)];
        std::vector<Fragment> next;
        next.reserve(frags.size());
        for (const Fragment& fr : frags) {
            if (fr.token >= 0) {
                next.push_back(fr);
                continue;
            }
            std::string_view rest = fr.text;
            for (size_t at; (at = rest.find(needle)) != std::string_view::npos;) {
                if (at > 0) next.push_back({-1, rest.substr(0, at)});
                next.push_back({id, {}});
                rest.remove_prefix(at + needle.size());
            }
            if (!rest.empty()) next.push_back({-1, rest});
        }
        frags.swap(next);
    }
    return frags;
}

std::vector<TokenId> Vocab::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    return tokenize(text, add_special, parse_special, kTokenizeChunkBytes);
}

// Where a long text may be cut without changing its tokens: at a space that
// follows a character other than a space, so that no token can span the cut.
//   gpt2: the space must follow a printable ASCII character and precede an
//     ASCII letter. Every pre-tokenizer then ends a word before the space
//     and starts the next one with it (" word"), whatever comes before or
//     after, and merges never cross words.
//   llama: merged symbols are always tokens, so when no token holds "▁" after
//     another character (spm_cut_ok_), no symbol can span "x▁".
// Returns the first cut at or after `from`, or text.size() when there is none.
size_t Vocab::next_cut(std::string_view text, size_t from) const {
    if (type_ == VocabType::SPM && !spm_cut_ok_) return text.size();
    for (size_t b = std::max<size_t>(from, 1); b + 1 < text.size(); ++b) {
        if (text[b] != ' ') continue;
        const unsigned char prev = static_cast<unsigned char>(text[b - 1]), next = static_cast<unsigned char>(text[b + 1]);
        if (type_ == VocabType::SPM) {
            if (prev != ' ') return b;
        } else if (prev > 0x20 && prev < 0x7f && ((next | 0x20) >= 'a' && (next | 0x20) <= 'z')) {
            return b;
        }
    }
    return text.size();
}

std::vector<TokenId> Vocab::tokenize(std::string_view text, bool add_special, bool parse_special,
                                     size_t chunk_bytes) const {
    std::vector<TokenId> out;
    if (add_special && add_bos_) out.push_back(bos_);
    bool prev_special = true;  // SPM: a space is added at the start and after each special token
    for (const Fragment& fr : split_special(text, parse_special)) {
        if (fr.token >= 0) {
            out.push_back(fr.token);
            prev_special = true;
            continue;
        }
        if (fr.text.empty()) continue;  // empty text adds nothing, not even the SPM space
        // Chunk by chunk: the working memory of the tokenizers (tens of bytes
        // per input byte) then stays that of one chunk, however long the text.
        for (size_t begin = 0; begin < fr.text.size();) {
            throw_if_cancelled();
            const size_t end = chunk_bytes >= fr.text.size() - begin ? fr.text.size()
                                                                     : next_cut(fr.text, begin + chunk_bytes);
            const std::string_view piece = fr.text.substr(begin, end - begin);
            if (type_ == VocabType::SPM) {
                std::string escaped;
                escaped.reserve(piece.size() + 8);
                if (add_space_prefix_ && prev_special && begin == 0) escaped += "\xe2\x96\x81";  // "▁"
                for (char c : piece) {
                    if (c == ' ') escaped += "\xe2\x96\x81";
                    else escaped += c;
                }
                tokenize_spm(escaped, out);
            } else {
                tokenize_bpe(piece, out);
            }
            begin += piece.size();
        }
        prev_special = false;
    }
    if (add_special && add_eos_) out.push_back(eos_);
    return out;
}

// ---- detokenize -----------------------------------------------------------------------

std::string Vocab::token_to_piece(TokenId id, bool special) const {
    const std::string& text = token_text(id);
    switch (types_[static_cast<size_t>(id)]) {
        case TokenType::Control:
            return special ? text : std::string();
        case TokenType::UserDefined:
        case TokenType::Unknown:
        case TokenType::Unused:
            return text;
        case TokenType::Byte:
            if (type_ == VocabType::SPM) {
                const int b = parse_byte_token(text);
                if (b >= 0) return std::string(1, static_cast<char>(b));
            }
            break;
        default:
            break;
    }
    if (type_ == VocabType::SPM) {
        // "▁" -> " "
        std::string out;
        out.reserve(text.size());
        for (size_t i = 0; i < text.size(); ++i) {
            if (text.compare(i, 3, "\xe2\x96\x81") == 0) {
                out += ' ';
                i += 2;
            } else {
                out += text[i];
            }
        }
        return out;
    }
    // gpt2: each character stands for one byte; anything else passes through
    std::string out;
    out.reserve(text.size());
    for (const auto& u : utf8_decode(text)) {
        const int b = u.cp == kInvalidCodepoint ? -1 : gpt2_codepoint_to_byte(u.cp);
        if (b >= 0) out += static_cast<char>(b);
        else out.append(text, u.offset, u.length);
    }
    return out;
}

std::string Vocab::text_piece(TokenId id, bool starts_fragment, bool special) const {
    std::string piece = token_to_piece(id, special);
    if (starts_fragment && type_ == VocabType::SPM && add_space_prefix_ && !is_special(id) && !piece.empty() &&
        piece[0] == ' ')
        piece.erase(0, 1);
    return piece;
}

std::string Vocab::detokenize(std::span<const TokenId> ids, bool remove_special, bool unparse_special) const {
    if (remove_special) {
        // only what tokenize(add_special=true) adds: a BOS that came from the
        // text itself ("<|endoftext|>" with parse_special) stays
        if (!ids.empty() && ids.front() == bos_ && bos_ >= 0 && add_bos_) ids = ids.subspan(1);
        if (!ids.empty() && ids.back() == eos_ && eos_ >= 0 && add_eos_) ids = ids.first(ids.size() - 1);
    }
    std::string out;
    bool starts_fragment = true;  // mirrors tokenize's prev_special
    for (TokenId id : ids) {
        out += text_piece(id, starts_fragment, unparse_special);
        starts_fragment = is_special(id);
    }
    return out;
}

}  // namespace sixstep::llm
