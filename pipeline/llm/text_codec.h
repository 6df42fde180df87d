// TextCodec: what generation needs from a tokenizer — text to token ids, a
// token's own text, end-of-generation tokens, and a stream that turns ids
// back into text as they come. The vocabulary stored in a GGUF file
// (vocab/vocab.h) is one; tests plug in their own.
//
//     auto codec = make_vocab_codec(vocab);
//     std::vector<int> ids = codec->encode("The cat sat on the");
//     auto stream = codec->stream();
//     std::string text = stream->push(ids[1]);   // complete text so far, maybe ""
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep::llm {

class Vocab;

// Streams token ids back into text. Byte-level tokens can split a UTF-8
// character, so push() returns only text that is complete so far.
class TokenTextStream {
public:
    virtual ~TokenTextStream() = default;
    virtual std::string push(int token) = 0;
    virtual std::string flush() = 0;  // whatever is still held back
};

class TextCodec {
public:
    virtual ~TextCodec() = default;
    // Token ids of a prompt, with the beginning-of-sequence token when the
    // model wants one.
    virtual std::vector<int> encode(std::string_view text) const = 0;
    // The text of one token, for display ("Ġmat" shown as " mat").
    virtual std::string piece(int token) const = 0;
    // End of generation (EOS, EOT, …).
    virtual bool is_eog(int token) const = 0;
    virtual std::unique_ptr<TokenTextStream> stream() const = 0;
    // The most bytes of text one token can stand for; 0 when unknown. A
    // text of more bytes than this times n encodes to more than n tokens,
    // known without encoding it (a server refuses a 1 MB prompt at once).
    virtual std::size_t max_token_bytes() const { return 0; }
};

// The most ids encode() may return for a text, known before any vocabulary
// is loaded (for work budgets): every token holds at least one byte, and a
// tokenizer adds at most BOS and a leading space of its own.
inline long long encoded_tokens_at_most(std::string_view text) { return static_cast<long long>(text.size()) + 2; }

// The token whose text is exactly `piece`, among ids 0..n_tokens-1 (what
// `force: " rug"` takes). Throws sixstep::Error naming the piece, with the
// nearest pieces as "did you mean".
int token_of_piece(const TextCodec& codec, int n_tokens, std::string_view piece);

// The tokenizer stored in a GGUF file, as a TextCodec.
std::unique_ptr<TextCodec> make_vocab_codec(std::shared_ptr<const Vocab> vocab);

}  // namespace sixstep::llm
