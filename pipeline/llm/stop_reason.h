// Why a generation stopped. One value from the generator through the
// scheduler and the HTTP server (which maps it to OpenAI's finish_reason)
// to the lessons, which read its name (respond.stop_reason).
#pragma once
#include <string_view>

namespace sixstep::llm {

enum class StopReason {
    none,         // still going
    eos,          // the model's end of generation (EOS, an end-of-turn token)
    stop_string,  // the text reached one of the request's stop strings
    max_tokens,   // the request's token budget was spent
    cancelled,    // the caller stopped it (a callback, a client that left, shutdown)
    error,        // the engine failed on it (the server's request streams)
};

// "none", "eos", "stop_string", "max_tokens", "cancelled", "error": the names
// the trace, JSON and /metrics print.
constexpr std::string_view stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::none: return "none";
        case StopReason::eos: return "eos";
        case StopReason::stop_string: return "stop_string";
        case StopReason::max_tokens: return "max_tokens";
        case StopReason::cancelled: return "cancelled";
        case StopReason::error: return "error";
    }
    return "none";
}

}  // namespace sixstep::llm
