// sixstep tokenize --model FILE.gguf TEXT [--no-bos] [--parse-special] [--json]
//   Splits TEXT ("-" reads standard input) with the model's tokenizer and
//   prints one token per line: its id, the text it stands for with spaces and
//   newlines made visible (␣ ↵ ⇥), and the token as stored in the vocabulary.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/vocab/unicode.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::cli {

namespace {

using namespace sixstep::llm;

struct TokenizeOptions {
    std::string model;
    std::string text;
    bool no_bos = false;
    bool parse_special = false;
    bool json = false;
};

// Spaces, tabs and newlines become visible symbols; other control characters
// and bytes that are not valid UTF-8 (half a character) are shown as \xNN.
std::string visible(const std::string& s) {
    std::string out;
    for (const auto& c : utf8_decode(s)) {
        if (c.cp == kInvalidCodepoint) {
            out += fmt::format("\\x{:02X}", static_cast<unsigned char>(s[c.offset]));
        } else if (c.cp == ' ') {
            out += "␣";
        } else if (c.cp == '\n') {
            out += "↵";
        } else if (c.cp == '\t') {
            out += "⇥";
        } else if (c.cp == '\r') {
            out += "\\r";
        } else if (c.cp < 0x20 || c.cp == 0x7f) {
            out += fmt::format("\\x{:02X}", c.cp);
        } else {
            out.append(s, c.offset, c.length);
        }
    }
    return out;
}

std::string_view type_name(TokenType t) {
    switch (t) {
        case TokenType::Normal: return "normal";
        case TokenType::Unknown: return "unknown";
        case TokenType::Control: return "control";
        case TokenType::UserDefined: return "user-defined";
        case TokenType::Unused: return "unused";
        case TokenType::Byte: return "byte";
        default: return "undefined";
    }
}

int run_tokenize(const TokenizeOptions& o) {
    std::string text = o.text;
    if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    const GGUFFile file = GGUFFile::open(o.model);
    const Vocab vocab = Vocab::from_gguf(file);
    const auto ids = vocab.tokenize(text, /*add_special=*/!o.no_bos, o.parse_special);

    if (o.json) {
        nlohmann::json tokens = nlohmann::json::array();
        for (TokenId id : ids)
            tokens.push_back({{"id", id},
                              {"piece", vocab.token_to_piece(id)},
                              {"token", vocab.token_text(id)},
                              {"type", std::string(type_name(vocab.token_type(id)))}});
        const nlohmann::json j = {{"model", o.model},
                                  {"tokenizer", vocab.model()},
                                  {"pre", vocab.pre()},
                                  {"text", text},
                                  {"n_tokens", ids.size()},
                                  {"ids", ids},
                                  {"tokens", std::move(tokens)}};
        std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return exit_ok;
    }

    size_t id_width = 2;
    for (TokenId id : ids) id_width = std::max(id_width, std::to_string(id).size());
    for (TokenId id : ids) {
        const std::string piece = visible(vocab.token_to_piece(id));
        const TokenType t = vocab.token_type(id);
        std::string note = vocab.token_text(id);
        if (t != TokenType::Normal) note += fmt::format("  ({})", type_name(t));
        // pad by characters, not bytes ("␣" is 3 bytes, one column)
        const size_t width = utf8_decode(piece).size();
        const std::string pad(width < 16 ? 16 - width : 0, ' ');
        std::printf("%*d  %s%s  %s\n", static_cast<int>(id_width), id, piece.c_str(), pad.c_str(), note.c_str());
    }
    std::printf("%zu tokens\n", ids.size());
    return exit_ok;
}

}  // namespace

void add_tokenize(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<TokenizeOptions>();
    auto* sub = app.add_subcommand("tokenize", "Split text into tokens with a model's vocabulary");
    sub->add_option("--model,-m", o->model, "GGUF file with the vocabulary")->required();
    sub->add_option("text", o->text, "the text (\"-\" reads standard input)")->required();
    sub->add_flag("--no-bos", o->no_bos, "do not add BOS/EOS even if the model asks for them");
    sub->add_flag("--parse-special", o->parse_special, "match control tokens written in the text, e.g. <s>");
    sub->add_flag("--json", o->json, "print one JSON object");
    commands.push_back({sub, [o] { return run_tokenize(*o); }});
}

}  // namespace sixstep::cli
