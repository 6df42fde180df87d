// libFuzzer target: a request body as `sixstep serve` receives it, parsed for
// /v1/completions or /v1/chat/completions (app/server/openai_protocol.h). The
// first byte picks the endpoint; the rest is the body.
//
// Must hold for every input:
//  - no crash, no sanitizer report;
//  - the parser returns a request or throws ApiError with status 400 or 404
//    — any other exception (one of the JSON library's own, a std::out_of_range)
//    would reach the client as a 500 "internal error" for its own mistake;
//  - an accepted request is one the engine can run: the served model, a
//    prompt as text or as token ids (completions only), max_tokens >= 1 when
//    given, temperature in [0, 2] and top_p in (0, 1], both finite, at most
//    four stop strings, none empty, include_usage only with stream;
//  - an accepted chat request ends its prompt on "Assistant:", for the model
//    to write from;
//  - every answer that a request leads to serializes (the text of a
//    completion may hold any bytes, and JSON needs UTF-8).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "app/server/openai_protocol.h"

using namespace sixstep::server;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz_openai: %s: %s\n", what, detail.c_str());
    std::abort();
}

void check_accepted(const CompletionRequest& r, Endpoint endpoint) {
    if (r.model != "stories-3m-f16") fail("accepted another model", r.model);
    if (endpoint == Endpoint::chat) {
        if (!r.prompt_tokens.empty()) fail("chat with token ids", "");
        const std::string tail = "Assistant:";
        if (r.prompt_text.size() < tail.size() || r.prompt_text.compare(r.prompt_text.size() - tail.size(), tail.size(), tail) != 0)
            fail("a chat prompt that does not end on the assistant's turn", r.prompt_text);
    }
    if (r.max_tokens && *r.max_tokens < 1) fail("max_tokens below 1", std::to_string(*r.max_tokens));
    const float t = r.sampling.temperature, p = r.sampling.top_p;
    if (!std::isfinite(t) || t < 0 || t > 2) fail("temperature out of range", std::to_string(t));
    if (!std::isfinite(p) || p <= 0 || p > 1) fail("top_p out of range", std::to_string(p));
    if (r.stop.size() > 4) fail("more than four stop strings", std::to_string(r.stop.size()));
    for (const std::string& s : r.stop)
        if (s.empty()) fail("an empty stop string", "");
    if (r.include_usage && !r.stream) fail("include_usage without stream", "");
    for (int id : r.prompt_tokens)
        if (id < 0) fail("a negative token id", std::to_string(id));

    // The answers this request leads to, with its prompt (any bytes) as the text.
    CompletionResult c;
    c.id = "cmpl-0";
    c.model = r.model;
    c.text = r.prompt_text;
    c.finish_reason = "length";
    c.prompt_tokens = static_cast<int>(r.prompt_tokens.size());
    c.completion_tokens = r.max_tokens.value_or(16);
    const auto dump = [](const nlohmann::json& j) {
        return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    (void)dump(completion_response(endpoint, c));
    (void)dump(completion_chunk(endpoint, c, true, r.include_usage));
    (void)dump(usage_chunk(endpoint, c));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const Endpoint endpoint = data[0] & 1 ? Endpoint::chat : Endpoint::completions;
    const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        check_accepted(parse_completion_request(body, endpoint, "stories-3m-f16"), endpoint);
    } catch (const ApiError& e) {
        if (e.status != 400 && e.status != 404) fail("an ApiError that is not 400 or 404", e.what());
        // The error body the client gets must serialize too.
        (void)error_body(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } catch (const std::exception& e) {
        fail("an exception that is not an ApiError (the client would get a 500)", e.what());
    }
    return 0;
}
