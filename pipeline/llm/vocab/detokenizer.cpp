// StreamingDetokenizer (see detokenizer.h).
#include "pipeline/llm/vocab/detokenizer.h"

#include "pipeline/llm/vocab/unicode.h"

namespace sixstep::llm {

StreamingDetokenizer::StreamingDetokenizer(const Vocab& vocab, bool strip_leading_space, bool unparse_special)
    : vocab_(&vocab), starts_fragment_(strip_leading_space), unparse_special_(unparse_special) {}

std::string StreamingDetokenizer::push(TokenId id) {
    const std::string piece = vocab_->text_piece(id, starts_fragment_, unparse_special_);
    starts_fragment_ = vocab_->is_special(id);  // as tokenize's prev_special
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
