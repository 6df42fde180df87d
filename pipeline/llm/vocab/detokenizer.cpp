// StreamingDetokenizer (see detokenizer.h).
#include "pipeline/llm/vocab/detokenizer.h"

#include "pipeline/llm/vocab/unicode.h"

namespace sixstep::llm {

StreamingDetokenizer::StreamingDetokenizer(const Vocab& vocab, bool strip_leading_space, bool unparse_special)
    : vocab_(&vocab), strip_(strip_leading_space), unparse_special_(unparse_special) {}

std::string StreamingDetokenizer::push(TokenId id) {
    std::string piece = vocab_->token_to_piece(id, unparse_special_);
    const bool special = vocab_->is_special(id);
    if (strip_ && !special && vocab_->type() == VocabType::SPM && vocab_->add_space_prefix() && !piece.empty() &&
        piece[0] == ' ')
        piece.erase(0, 1);
    if (!special) strip_ = false;
    held_ += piece;
    const size_t keep = utf8_incomplete_tail(held_);
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string StreamingDetokenizer::flush() {
    std::string out;
    out.swap(held_);
    return out;
}

}  // namespace sixstep::llm
