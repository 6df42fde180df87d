#include "app/server/openai_protocol.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "app/server/chat_template.h"
#include "pipeline/core/text.h"

namespace sixstep::server {

using json = nlohmann::json;

std::string error_type_for_status(int status) {
    switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 405: return "invalid_request_error";
    case 408: return "timeout_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "server_overloaded";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

json error_body(const ApiError& e) {
    json err = {{"message", e.message}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
    if (!e.param.empty()) err["param"] = e.param;
    if (!e.code.empty()) err["code"] = e.code;
    return {{"error", err}};
}

namespace {

// Characters of UTF-8 text, as OpenAI counts its limits (the bytes that
// start one).
std::size_t characters(std::string_view s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A value the client sent, as a message quotes it: cut in the middle when
// long (a 900 KB key or model name was echoed whole, twice for a key).
std::string cut_value(std::string_view value, std::size_t max_bytes = 120) { return elide(value, max_bytes); }

ApiError bad(const std::string& param, const std::string& message, const std::string& code = "") {
    return ApiError(400, "invalid_request_error", message, param, code);
}

const char* json_type(const json& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number()) return "a number";
    if (v.is_string()) return "a string";
    if (v.is_array()) return "an array";
    return "an object";
}

double number(const json& v, const std::string& name, double lo, double hi) {
    if (!v.is_number()) throw bad(name, fmt::format("'{}' must be a number, not {}", name, json_type(v)));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
        throw bad(name, fmt::format("'{}' is {:g}; it must be between {:g} and {:g}", name, x, lo, hi));
    return x;
}

long long integer(const json& v, const std::string& name) {
    // JSON has one kind of number: 1000, 1E3 and 1.0 are the same integer.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(LLONG_MAX))
        throw bad(name, fmt::format("'{}' is {}; it is too large", name, v.get<std::uint64_t>()));
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_number_float()) {
        const double x = v.get<double>();
        if (x != std::floor(x)) throw bad(name, fmt::format("'{}' must be an integer, not a fraction", name));
        if (std::fabs(x) >= 9.2e18) throw bad(name, fmt::format("'{}' is {:g}; it is too large", name, x));
        return static_cast<long long>(x);
    }
    throw bad(name, fmt::format("'{}' must be an integer, not {}", name, json_type(v)));
}

// A seed is any of 2^64 values, as on the command line: a negative one was
// wrapped to a large one, and 2^64 − 1 was refused as too large.
std::uint64_t seed_value(const json& v) {
    const auto out_of_range = [](const std::string& typed) {
        return bad("seed", fmt::format("'seed' is {}; it must be a whole number from 0 to 18446744073709551615", typed));
    };
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer()) throw out_of_range(std::to_string(v.get<long long>()));  // only negatives are signed
    if (v.is_number_float()) {
        const double x = v.get<double>();
        if (x != std::floor(x)) throw bad("seed", "'seed' must be an integer, not a fraction");
        if (x < 0 || x >= 18446744073709551616.0) throw out_of_range(fmt::format("{:g}", x));
        return static_cast<std::uint64_t>(x);
    }
    throw bad("seed", fmt::format("'seed' must be an integer, not {}", json_type(v)));
}

bool boolean(const json& v, const std::string& name) {
    if (!v.is_boolean()) throw bad(name, fmt::format("'{}' must be true or false, not {}", name, json_type(v)));
    return v.get<bool>();
}

// {"type": "text", …}: json's value("type", "") throws when "type" is there
// but not a string ("type": true), which reached the client as a 500.
bool typed_text(const json& o) {
    const auto t = o.find("type");
    return t != o.end() && t->is_string() && t->get_ref<const std::string&>() == "text";
}

std::string text_content(const json& content, const std::string& where) {
    if (content.is_string()) return content.get<std::string>();
    if (content.is_array()) {
        std::string text;
        for (const json& part : content) {
            if (!part.is_object() || !typed_text(part) || !part.contains("text") || !part["text"].is_string())
                throw bad(where, fmt::format("'{}': only text parts ({{\"type\": \"text\", \"text\": …}}) are supported", where));
            text += part["text"].get<std::string>();
        }
        return text;
    }
    throw bad(where, fmt::format("'{}' must be a string or a list of text parts, not {}", where, json_type(content)));
}

std::string chat_prompt(const json& messages) {
    if (!messages.is_array() || messages.empty())
        throw bad("messages", "'messages' must be a non-empty list of {role, content}");
    std::vector<ChatMessage> chat;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const json& m = messages[i];
        const std::string where = fmt::format("messages[{}]", i);
        if (!m.is_object()) throw bad(where, fmt::format("'{}' must be an object with role and content", where));
        if (!m.contains("role") || !m["role"].is_string())
            throw bad(where + ".role", fmt::format("'{}.role' must be a string", where));
        const std::string role = m["role"].get<std::string>();
        static const std::set<std::string> roles = {"system", "developer", "user", "assistant"};
        if (!roles.count(role))
            throw bad(where + ".role", fmt::format("'{}.role' is '{}'; use system, developer, user or assistant "
                                                  "(tools are not supported)", where, cut_value(role)));
        if (!m.contains("content")) throw bad(where + ".content", fmt::format("'{}' has no content", where));
        chat.push_back({role, text_content(m["content"], where + ".content")});
    }
    return apply_plain_chat_template(chat);
}

// OpenAI's four forms: a string, token ids, and a batch of either; a batch
// of one is its one prompt ([[1, 2]] is [1, 2]). One level only: a prompt
// nested 400,000 deep must not recurse as deep.
void parse_prompt(const json& given, CompletionRequest& r) {
    const bool batch_of_one = given.is_array() && given.size() == 1 && (given[0].is_string() || given[0].is_array());
    const json& p = batch_of_one ? given[0] : given;
    if (p.is_string()) {
        r.prompt_text = p.get<std::string>();
    } else if (p.is_array() && !p.empty() && p[0].is_number()) {
        for (std::size_t i = 0; i < p.size(); ++i) {
            const std::string where = fmt::format("prompt[{}]", i);
            if (!p[i].is_number()) throw bad("prompt", fmt::format("'{}' must be a token id, not {}", where, json_type(p[i])));
            // Worded as the vocabulary check after it: -1 was "out of range",
            // -1e30 "too large", 99999 "outside the vocabulary".
            const double x = p[i].get<double>();
            if (x < 0 || x > INT_MAX)
                throw bad("prompt", fmt::format("{}: token id {} is outside the vocabulary", where, p[i].dump()));
            const int id = static_cast<int>(integer(p[i], where));  // 2.0 is the id 2; 2.5 is no id
            r.prompt_tokens.push_back(id);
        }
    } else if (p.is_array() && p.size() > 1 && (p[0].is_string() || p[0].is_array())) {
        throw bad("prompt", fmt::format("one prompt per request: this list holds {} prompts", p.size()));
    } else if (p.is_array() && !p.empty() && !p[0].is_array()) {
        // [true] was "not an array": it is one, of the wrong things.
        throw bad("prompt", fmt::format("'prompt[0]' must be a token id or a text, not {}", json_type(p[0])));
    } else {
        throw bad("prompt", fmt::format("'prompt' must be a string or a list of token ids, not {}",
                                        p.is_array() && p.empty() ? "an empty list" : json_type(p)));
    }
}

}  // namespace

CompletionRequest parse_completion_request(const std::string& body, Endpoint endpoint, const std::string& model_id) {
    // Nesting is capped while parsing: a request needs four levels (a chat
    // message's content parts), and 170,000 nested objects in `metadata`,
    // within the 1 MiB body limit, took 19 MB to hold.
    const auto shallow = [](int depth, json::parse_event_t event, json&) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
            depth >= max_json_depth)
            throw bad("", fmt::format("the body nests objects and lists deeper than {} levels", max_json_depth));
        return true;
    };
    json j;
    try {
        j = json::parse(body, shallow);
    } catch (const json::out_of_range& e) {
        throw bad("", "a number in the body is out of range: " + cut_value(json_error_words(e), 300));
    } catch (const json::exception& e) {
        throw bad("", "the body is not valid JSON: " + cut_value(json_error_words(e), 300));
    }
    if (!j.is_object()) throw bad("", fmt::format("the body must be a JSON object, not {}", json_type(j)));
    const bool chat = endpoint == Endpoint::chat;
    static const std::set<std::string> common = {"model", "max_tokens", "stream", "stream_options", "temperature",
                                                 "top_p", "seed", "stop", "n", "logprobs", "frequency_penalty",
                                                 "presence_penalty", "user", "logit_bias"};
    static const std::set<std::string> completions_only = {"prompt", "echo", "suffix", "best_of"};
    // store, metadata and parallel_tool_calls: fields some clients always send.
    static const std::set<std::string> chat_only = {"messages", "max_completion_tokens", "top_logprobs", "tools",
                                                    "tool_choice", "response_format", "store", "metadata",
                                                    "parallel_tool_calls"};
    for (const auto& [key, value] : j.items())
        if (!common.count(key) && !(chat ? chat_only : completions_only).count(key))
            throw bad(cut_value(key), fmt::format("unrecognized request argument: '{}'", cut_value(key)));

    CompletionRequest r;
    r.endpoint = endpoint;
    if (!j.contains("model")) throw bad("model", "'model' is required");
    if (!j["model"].is_string()) throw bad("model", fmt::format("'model' must be a string, not {}", json_type(j["model"])));
    r.model = j["model"].get<std::string>();
    if (r.model != model_id)
        throw ApiError(404, "not_found_error",
                       fmt::format("the model '{}' does not exist; this server serves '{}'", cut_value(r.model), model_id), "model",
                       "model_not_found");

    if (chat) {
        if (!j.contains("messages")) throw bad("messages", "'messages' is required");
        r.prompt_text = chat_prompt(j["messages"]);
    } else {
        if (!j.contains("prompt")) throw bad("prompt", "'prompt' is required");
        parse_prompt(j["prompt"], r);
    }

    for (const char* key : {"max_tokens", "max_completion_tokens"}) {
        if (!j.contains(key) || j[key].is_null()) continue;
        const long long n = integer(j[key], key);
        if (n < 1 || n > INT_MAX)
            throw bad(key, fmt::format("'{}' is {}; it must be from 1 to {}", key, n, INT_MAX));
        r.max_tokens = static_cast<int>(n);
        r.max_tokens_field = key;
    }
    if (j.contains("stream") && !j["stream"].is_null()) r.stream = boolean(j["stream"], "stream");
    if (j.contains("stream_options") && !j["stream_options"].is_null()) {
        const json& so = j["stream_options"];
        if (!r.stream) throw bad("stream_options", "'stream_options' is only allowed with \"stream\": true");
        if (!so.is_object()) throw bad("stream_options", "'stream_options' must be an object");
        for (const auto& [key, value] : so.items()) {
            if (key != "include_usage")
                throw bad("stream_options." + cut_value(key), fmt::format("unrecognized stream option: '{}'", cut_value(key)));
            r.include_usage = boolean(value, "stream_options.include_usage");
        }
    }

    // Sampling: OpenAI's defaults (temperature 1, top_p 1); no top-k or min-p cut.
    r.sampling.temperature = 1;
    r.sampling.top_k = 0;
    r.sampling.top_p = 1;
    r.sampling.min_p = 0;
    if (j.contains("temperature") && !j["temperature"].is_null())
        r.sampling.temperature = static_cast<float>(number(j["temperature"], "temperature", 0, 2));
    if (j.contains("top_p") && !j["top_p"].is_null()) {
        r.sampling.top_p = static_cast<float>(number(j["top_p"], "top_p", 0, 1));
        if (r.sampling.top_p <= 0) throw bad("top_p", "'top_p' must be above 0 (use temperature 0 for greedy)");
    }
    if (j.contains("seed") && !j["seed"].is_null()) {
        r.sampling.seed = seed_value(j["seed"]);
        r.has_seed = true;
    }
    if (j.contains("stop") && !j["stop"].is_null()) {
        const json& s = j["stop"];
        if (s.is_string()) {
            r.stop.push_back(s.get<std::string>());
        } else if (s.is_array() && s.size() <= 4) {
            for (const json& x : s) {
                if (!x.is_string()) throw bad("stop", "'stop' must hold only strings");
                r.stop.push_back(x.get<std::string>());
            }
        } else {
            throw bad("stop", "'stop' must be a string or a list of up to 4 strings");
        }
        for (const std::string& x : r.stop)
            if (x.empty()) throw bad("stop", "a stop string must not be empty");
    }

    // Fields this server does not implement: refused unless they ask for nothing.
    const auto refuse_unless = [&](const char* key, auto is_default, const char* what) {
        if (j.contains(key) && !j[key].is_null() && !is_default(j[key]))
            throw bad(key, fmt::format("'{}' is not supported: {}", key, what));
    };
    const auto is_one = [](const json& v) { return v.is_number() && v.get<double>() == 1; };  // 1.0 is 1
    const auto is_false = [](const json& v) { return v.is_boolean() && !v.get<bool>(); };
    const auto is_zero = [](const json& v) { return v.is_number() && v.get<double>() == 0; };
    // json's empty() is false for every string, "" too.
    const auto is_empty = [](const json& v) {
        return v.is_string() ? v.get_ref<const std::string&>().empty() : (v.is_object() || v.is_array()) && v.empty();
    };
    refuse_unless("n", is_one, "one choice per request (n = 1)");
    refuse_unless("best_of", is_one, "one choice per request (best_of = 1)");
    refuse_unless("logprobs", chat ? std::function<bool(const json&)>(is_false) : [](const json& v) {
        return v.is_number_integer() && v.get<long long>() == 0;
    }, "no log probabilities are returned");
    refuse_unless("top_logprobs", is_zero, "no log probabilities are returned");
    refuse_unless("echo", is_false, "the prompt is not echoed");
    refuse_unless("suffix", is_empty, "no insertion (suffix)");
    refuse_unless("frequency_penalty", is_zero, "no penalties");
    refuse_unless("presence_penalty", is_zero, "no penalties");
    refuse_unless("logit_bias", is_empty, "no logit bias");
    refuse_unless("tools", is_empty, "no tool calls");
    refuse_unless("tool_choice", [](const json& v) { return v.is_string() && v.get<std::string>() == "none"; },
                  "no tool calls");
    refuse_unless("response_format", [](const json& v) { return v.is_object() && typed_text(v); },
                  "plain text only ({\"type\": \"text\"})");
    refuse_unless("store", is_false, "nothing is stored");
    // Tags for stored completions: nothing is stored, and they change nothing
    // else; held to OpenAI's limits (16 pairs of strings, keys up to 64
    // characters, values up to 512), so that they stay small.
    if (j.contains("metadata") && !j["metadata"].is_null()) {
        const json& m = j["metadata"];
        if (!m.is_object()) throw bad("metadata", fmt::format("'metadata' must be an object, not {}", json_type(m)));
        if (m.size() > 16) throw bad("metadata", fmt::format("'metadata' holds {} pairs; at most 16", m.size()));
        for (const auto& [key, value] : m.items()) {
            if (!value.is_string())
                throw bad("metadata", fmt::format("'metadata' values must be strings, not {}", json_type(value)));
            if (characters(key) > 64 || characters(value.get_ref<const std::string&>()) > 512)
                throw bad("metadata", "'metadata' keys hold at most 64 characters, values at most 512");
        }
    }
    // Only says how tools may be called, and no tool is: either value asks for nothing.
    if (j.contains("parallel_tool_calls") && !j["parallel_tool_calls"].is_null())
        (void)boolean(j["parallel_tool_calls"], "parallel_tool_calls");
    if (j.contains("user") && !j["user"].is_null() && !j["user"].is_string())
        throw bad("user", "'user' must be a string");
    return r;
}

std::string finish_reason_of(llm::StopReason stop_reason) {
    if (stop_reason == llm::StopReason::max_tokens) return "length";
    if (stop_reason == llm::StopReason::eos || stop_reason == llm::StopReason::stop_string) return "stop";
    // cancelled, error: never sent as a finish reason (the front end answers with an error)
    return std::string(llm::stop_reason_name(stop_reason));
}

json usage_json(int prompt_tokens, int completion_tokens) {
    // The server's own counts fit an int together (both within the context);
    // summed as 64 bits, any two do (fuzz_openai found 1 + 2^31 - 1).
    return {{"prompt_tokens", prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"total_tokens", static_cast<long long>(prompt_tokens) + completion_tokens}};
}

namespace {

json finish_json(const std::string& finish_reason) {
    return finish_reason.empty() ? json(nullptr) : json(finish_reason);
}

}  // namespace

json completion_response(Endpoint endpoint, const CompletionResult& r) {
    json choice = {{"index", 0}};
    if (endpoint == Endpoint::chat)
        choice["message"] = {{"role", "assistant"}, {"content", r.text}};
    else
        choice["text"] = r.text;
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = finish_json(r.finish_reason);
    return {{"id", r.id},
            {"object", endpoint == Endpoint::chat ? "chat.completion" : "text_completion"},
            {"created", r.created},
            {"model", r.model},
            {"choices", json::array({choice})},
            {"usage", usage_json(r.prompt_tokens, r.completion_tokens)}};
}

json completion_chunk(Endpoint endpoint, const CompletionResult& r, bool first, bool include_usage) {
    json choice = {{"index", 0}};
    if (endpoint == Endpoint::chat) {
        json delta = json::object();
        if (first) delta["role"] = "assistant";
        if (!r.text.empty() || first) delta["content"] = r.text;
        choice["delta"] = delta;
    } else {
        choice["text"] = r.text;
    }
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = finish_json(r.finish_reason);
    json j = {{"id", r.id},
              {"object", endpoint == Endpoint::chat ? "chat.completion.chunk" : "text_completion"},
              {"created", r.created},
              {"model", r.model},
              {"choices", json::array({choice})}};
    if (include_usage) j["usage"] = nullptr;
    return j;
}

json usage_chunk(Endpoint endpoint, const CompletionResult& r) {
    return {{"id", r.id},
            {"object", endpoint == Endpoint::chat ? "chat.completion.chunk" : "text_completion"},
            {"created", r.created},
            {"model", r.model},
            {"choices", json::array()},
            {"usage", usage_json(r.prompt_tokens, r.completion_tokens)}};
}

}  // namespace sixstep::server
