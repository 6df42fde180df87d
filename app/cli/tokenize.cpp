// sixstep tokenize --model FILE.gguf TEXT [--no-bos] [--parse-special] [--json]
//   Splits TEXT ("-" reads standard input) with the model's tokenizer and
//   prints one token per line: its id, the text it stands for with spaces and
//   newlines made visible (␣ ↵ ⇥), and the token as stored in the vocabulary.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/terminal.h"
#include "app/cli/validators.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"
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

// One JSON string; token pieces may hold half a UTF-8 character: replace, never throw.
std::string json_string(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The object nlohmann::json's dump(2) prints (keys sorted), written a token at
// a time: a JSON tree of every token costs hundreds of bytes per input byte.
void print_json(const TokenizeOptions& o, const Vocab& vocab, const std::string& text,
                const std::vector<TokenId>& ids) {
    std::printf("{\n  \"ids\": [");
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s\n    %d", i ? "," : "", ids[i]);
    std::printf("%s],\n  \"model\": %s,\n  \"n_tokens\": %zu,\n  \"pre\": %s,\n  \"text\": %s,\n  \"tokenizer\": %s,\n",
                ids.empty() ? "" : "\n  ", json_string(o.model).c_str(), ids.size(), json_string(vocab.pre()).c_str(),
                json_string(text).c_str(), json_string(vocab.model()).c_str());
    std::printf("  \"tokens\": [");
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i % 4096 == 0) throw_if_cancelled();
        const TokenId id = ids[i];
        std::printf("%s\n    {\n      \"id\": %d,\n      \"piece\": %s,\n      \"token\": %s,\n      \"type\": \"%s\"\n    }",
                    i ? "," : "", id, json_string(vocab.token_to_piece(id)).c_str(),
                    json_string(vocab.token_text(id)).c_str(), std::string(type_name(vocab.token_type(id))).c_str());
    }
    std::printf("%s]\n}\n", ids.empty() ? "" : "\n  ");
}

// The most text `tokenize -` reads: a whole book is a few MiB.
constexpr std::size_t max_stdin_bytes = std::size_t{64} << 20;

int run_tokenize(const TokenizeOptions& o) {
    std::string text = o.text;
    if (text == "-") {
        // Standard input may never end (/dev/zero, `yes |`): read at most
        // max_stdin_bytes and refuse more, rather than grow until memory runs out.
        // read(2), not std::cin: a stream takes a read error (standard input
        // a folder, or closed) for the end, and tokenized "" with exit 0.
        text.clear();
        char buf[1 << 16];
        for (;;) {
            const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
            if (n == 0) break;
            if (n < 0 && errno == EINTR) {
                throw_if_cancelled();
                continue;
            }
            if (n < 0) throw Error(fmt::format("standard input: cannot read it ({})", std::strerror(errno)));
            text.append(buf, static_cast<std::size_t>(n));
            if (text.size() > max_stdin_bytes)
                throw Error(fmt::format("standard input: more than {} MiB of text; tokenize a shorter text",
                                        max_stdin_bytes >> 20));
            throw_if_cancelled();
        }
    }
    throw_if_cancelled();  // Ctrl+C while reading standard input ends the read early: do not go on with half of it
    const GGUFFile file = GGUFFile::open(o.model);
    const Vocab vocab = Vocab::from_gguf(file);
    const auto ids = vocab.tokenize(text, /*add_special=*/!o.no_bos, o.parse_special);

    if (o.json) {
        print_json(o, vocab, text, ids);
        return exit_ok;
    }

    size_t id_width = 2;
    for (TokenId id : ids) id_width = std::max(id_width, std::to_string(id).size());
    for (TokenId id : ids) {
        const std::string piece = visible(vocab.token_to_piece(id));
        const TokenType t = vocab.token_type(id);
        std::string note = sixstep::printable(vocab.token_text(id));
        if (t != TokenType::Normal) note += fmt::format("  ({})", type_name(t));
        // pad by characters, not bytes ("␣" is 3 bytes, one column)
        const size_t width = utf8_decode(piece).size();
        const std::string pad(width < 16 ? 16 - width : 0, ' ');
        std::printf("%*d  %s%s  %s\n", static_cast<int>(id_width), id, piece.c_str(), pad.c_str(), note.c_str());
    }
    std::printf("%s\n", count_of(ids.size(), "token", "tokens").c_str());
    return exit_ok;
}

}  // namespace

void add_tokenize(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<TokenizeOptions>();
    auto* sub = app.add_subcommand("tokenize", "Split text into tokens with a model's vocabulary");
    sub->add_option("--model,-m", o->model, "GGUF file with the vocabulary")->required()->transform(model_file());
    sub->add_option("text", o->text, "the text (\"-\" reads standard input)")->required();
    sub->add_flag("--no-bos", o->no_bos, "do not add BOS/EOS even if the model asks for them");
    sub->add_flag("--parse-special", o->parse_special, "match control tokens written in the text, e.g. <s>");
    sub->add_flag("--json", o->json, "print one JSON object");
    add_progress_option(sub);
    add_examples(sub, {"sixstep tokenize -m stories-3m-f16.gguf \"The cat sat on the mat.\"",
                      "sixstep tokenize -m stories-3m-f16.gguf --json \"你好\""});
    commands.push_back({sub, [o] { return run_tokenize(*o); }});
}

}  // namespace sixstep::cli
