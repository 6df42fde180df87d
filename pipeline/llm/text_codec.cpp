#include "pipeline/llm/text_codec.h"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/vocab/detokenizer.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

namespace {

class VocabStream : public TokenTextStream {
public:
    explicit VocabStream(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)), detok_(*vocab_) {}
    std::string push(int token) override { return detok_.push(token); }
    std::string flush() override { return detok_.flush(); }

private:
    std::shared_ptr<const Vocab> vocab_;
    StreamingDetokenizer detok_;
};

class VocabCodec : public TextCodec {
public:
    explicit VocabCodec(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)) {
        // A token's stored text is never shorter than the text it encodes:
        // "▁the" (6 bytes) is " the", "Ġthe" is " the", "<0x0A>" one byte.
        for (std::size_t id = 0; id < vocab_->n_tokens(); ++id)
            max_token_bytes_ = std::max(max_token_bytes_, vocab_->token_text(static_cast<TokenId>(id)).size());
    }
    std::vector<int> encode(std::string_view text) const override {
        const auto ids = vocab_->tokenize(text, /*add_special=*/true, /*parse_special=*/false);
        return {ids.begin(), ids.end()};
    }
    std::string piece(int token) const override { return vocab_->token_to_piece(token, /*special=*/true); }
    bool is_eog(int token) const override { return vocab_->is_eog(token); }
    std::unique_ptr<TokenTextStream> stream() const override { return std::make_unique<VocabStream>(vocab_); }
    std::size_t max_token_bytes() const override { return max_token_bytes_; }

private:
    std::shared_ptr<const Vocab> vocab_;
    std::size_t max_token_bytes_ = 0;
};

}  // namespace

int token_of_piece(const TextCodec& codec, int n_tokens, std::string_view piece) {
    std::vector<std::string> pieces;
    pieces.reserve(static_cast<std::size_t>(std::max(n_tokens, 0)));
    for (int id = 0; id < n_tokens; ++id) {
        pieces.push_back(codec.piece(id));
        if (pieces.back() == piece) return id;
    }
    // "rug" for " rug": a word's token inside a text starts with its space,
    // which is what was meant far more often than the nearest spelling ("ug").
    if (!piece.empty() && piece.front() != ' ')
        if (std::find(pieces.begin(), pieces.end(), " " + std::string(piece)) != pieces.end())
            throw Error(fmt::format("no token of this vocabulary is exactly {} \u2014 did you mean {}, with the space "
                                    "that starts a word inside a text?",
                                    quote_text(piece), quote_text(" " + std::string(piece))));
    // A piece pasted by mistake may be a megabyte: the message quotes its ends.
    throw Error(fmt::format("no token of this vocabulary is exactly {}{}", quote_text(elide(piece, 120)),
                            did_you_mean(piece, pieces)));
}

std::unique_ptr<TextCodec> make_vocab_codec(std::shared_ptr<const Vocab> vocab) {
    return std::make_unique<VocabCodec>(std::move(vocab));
}

}  // namespace sixstep::llm
