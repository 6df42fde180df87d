// StreamingDetokenizer — turns generated tokens into text one token at a
// time, never printing half a character.
//
// A token's bytes may end in the middle of a UTF-8 character (byte-fallback
// tokens <0xE2><0x96><0x81>, or a byte-level BPE token holding the first byte
// of an emoji). push() returns only complete characters and holds back an
// incomplete tail until the next token completes it; bytes that can never
// become valid UTF-8 are passed on rather than held forever. flush() returns
// whatever is still held at the end of generation.
//
//   StreamingDetokenizer detok(vocab);
//   for (TokenId t : generated) std::cout << detok.push(t) << std::flush;
//   std::cout << detok.flush();
#pragma once
#include <string>

#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

class StreamingDetokenizer {
public:
    // strip_leading_space: remove the space an SPM ("llama") tokenizer put in
    // front of the text from the first text token (true for decoding a whole
    // prompt; false when continuing after a prompt, where the space is real).
    // After a special token the space goes either way, as in
    // Vocab::detokenize: the whole stream reads as detokenize(ids) would.
    // unparse_special: print control tokens such as "</s>" (else nothing).
    explicit StreamingDetokenizer(const Vocab& vocab, bool strip_leading_space = false,
                                  bool unparse_special = false);

    // The text that is complete after this token (possibly empty).
    std::string push(TokenId id);
    // Whatever is held back (an incomplete character at the very end).
    std::string flush();
    // Bytes held back right now.
    size_t pending() const { return held_.size(); }

private:
    const Vocab* vocab_;
    bool starts_fragment_;  // the next text token loses its SPM space (Vocab::text_piece)
    bool unparse_special_;
    std::string held_;
};

}  // namespace sixstep::llm
