#include "pipeline/llm/text_codec.h"

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
    explicit VocabCodec(std::shared_ptr<const Vocab> vocab) : vocab_(std::move(vocab)) {}
    std::vector<int> encode(std::string_view text) const override {
        const auto ids = vocab_->tokenize(text, /*add_special=*/true, /*parse_special=*/false);
        return {ids.begin(), ids.end()};
    }
    std::string piece(int token) const override { return vocab_->token_to_piece(token, /*special=*/true); }
    bool is_eog(int token) const override { return vocab_->is_eog(token); }
    std::unique_ptr<TokenTextStream> stream() const override { return std::make_unique<VocabStream>(vocab_); }

private:
    std::shared_ptr<const Vocab> vocab_;
};

}  // namespace

std::unique_ptr<TextCodec> make_vocab_codec(std::shared_ptr<const Vocab> vocab) {
    return std::make_unique<VocabCodec>(std::move(vocab));
}

}  // namespace sixstep::llm
