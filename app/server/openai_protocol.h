// The OpenAI-compatible API's requests and responses, as JSON: parsing and
// checking a /v1/completions or /v1/chat/completions body, and writing the
// answers — whole, or as server-sent-event chunks — and the error bodies.
//
// What is accepted, and what is refused with a clear 400 (never silently
// ignored, because a client that sets a field expects it to act):
//   model          required; must be the served model's id (else 404 model_not_found)
//   prompt         completions: a string, a list of one string, or a list of token ids
//   messages       chat: [{role: system|developer|user|assistant, content: string or [{type: text, text}]}]
//   max_tokens     (or max_completion_tokens) >= 1; prompt + max_tokens must fit the context.
//                  Default: completions 16 (as OpenAI), chat whatever the context leaves
//   stream, stream_options.include_usage (stream_options only with stream: true, as OpenAI)
//   temperature    0..2 (default 1, as OpenAI; 0 → greedy), top_p (0, 1], seed (integer)
//   stop           a string or up to 4 strings
//   n, best_of     1 only; logprobs, echo, suffix, logit_bias, tools: refused unless null/false/empty
//   frequency_penalty, presence_penalty: 0 only;  user: accepted and ignored (it is only a label)
// Any other field → 400 naming it (OpenAI answers unknown arguments the same way).
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/llm/sampler.h"
#include "pipeline/llm/stop_reason.h"

namespace sixstep::server {

// An error as OpenAI reports it: the HTTP status and {"error": {message, type, param, code}}.
struct ApiError : std::runtime_error {
    int status = 400;
    std::string type;   // "invalid_request_error", "not_found_error", "rate_limit_error", "server_error", …
    std::string param;  // the field at fault ("" → null)
    std::string code;   // "model_not_found", "context_length_exceeded", … ("" → null)
    // The message whole: what() is a C string, cut at the first NUL byte of
    // a model name or path quoted in it ("the model 'ab" for "ab\u0000cd").
    std::string message;
    ApiError(int status_, std::string type_, const std::string& message_, std::string param_ = "", std::string code_ = "")
        : std::runtime_error(message_), status(status_), type(std::move(type_)), param(std::move(param_)),
          code(std::move(code_)), message(message_) {}
};
nlohmann::json error_body(const ApiError& e);
// The error type OpenAI uses for a status (400 invalid_request_error, 404 not_found_error, …).
std::string error_type_for_status(int status);

enum class Endpoint { completions, chat };

struct CompletionRequest {
    Endpoint endpoint = Endpoint::completions;
    std::string model;
    std::string prompt_text;         // the prompt as text (chat: the template applied); "" with token ids
    std::vector<int> prompt_tokens;  // the prompt given as token ids (completions only)
    std::optional<int> max_tokens;   // none → the endpoint's default
    std::string max_tokens_field = "max_tokens";  // as the client named it (chat: max_completion_tokens too)
    bool stream = false;
    bool include_usage = false;      // stream_options.include_usage
    llm::SamplerParams sampling;     // temperature, top_p, seed (top_k and min_p off)
    bool has_seed = false;
    std::vector<std::string> stop;
};

// Parses and checks a body. Throws ApiError (400, or 404 for another model).
CompletionRequest parse_completion_request(const std::string& body, Endpoint endpoint, const std::string& model_id);

// Why the JSON library refused a text, in its own words without its
// "[json.exception.parse_error.101] " tag: "number overflow parsing '1e400'"
// for a number no double holds. For messages to a server's client or from
// a client about a server. Inline: the load generator (linked alone into
// the lesson fuzzer) uses it too.
// How deep a request body may nest objects and lists.
inline constexpr int max_json_depth = 32;

inline std::string json_error_words(const nlohmann::json::exception& e) {
    const std::string what = e.what();
    const std::size_t tag = what.find("] ");
    return tag == std::string::npos ? what : what.substr(tag + 2);
}

// What a finished request turns into.
struct CompletionResult {
    std::string id;            // "cmpl-7", "chatcmpl-7"
    long long created = 0;     // unix seconds
    std::string model;
    std::string text;          // all of it (whole answer) or the new part (chunk)
    std::string finish_reason; // "stop", "length", "" while streaming
    int prompt_tokens = 0;
    int completion_tokens = 0;
};

// "stop" for eos and stop strings, "length" for max_tokens.
std::string finish_reason_of(llm::StopReason stop_reason);
nlohmann::json completion_response(Endpoint endpoint, const CompletionResult& r);
// One streamed chunk. first: chat's first chunk carries the role.
nlohmann::json completion_chunk(Endpoint endpoint, const CompletionResult& r, bool first, bool include_usage);
// The last chunk when include_usage: no choices, the usage.
nlohmann::json usage_chunk(Endpoint endpoint, const CompletionResult& r);
nlohmann::json usage_json(int prompt_tokens, int completion_tokens);

}  // namespace sixstep::server
