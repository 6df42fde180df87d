// The OpenAI request parser on its own: what each field turns into, and that
// every refusal names its field with status 400 (404 for another model).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "app/server/chat_template.h"
#include "app/server/openai_protocol.h"

using namespace sixstep::server;
using Json = nlohmann::json;

namespace {

CompletionRequest parse(const Json& j, Endpoint e = Endpoint::completions) {
    return parse_completion_request(j.dump(), e, "m");
}

ApiError refusal(const std::string& body, Endpoint e = Endpoint::completions) {
    try {
        parse_completion_request(body, e, "m");
    } catch (const ApiError& err) {
        return err;
    }
    FAIL("accepted: " << body);
    return ApiError(0, "", "");
}

}  // namespace

TEST_CASE("openai protocol: fields become the request, with OpenAI's defaults") {
    const CompletionRequest r = parse({{"model", "m"}, {"prompt", "Hi"}});
    CHECK(r.prompt_text == "Hi");
    CHECK_FALSE(r.max_tokens.has_value());
    CHECK_FALSE(r.stream);
    CHECK(r.sampling.temperature == 1.0f);
    CHECK(r.sampling.top_p == 1.0f);
    CHECK(r.sampling.top_k == 0);
    CHECK_FALSE(r.has_seed);

    const CompletionRequest t = parse({{"model", "m"},
                                       {"prompt", {5, 6, 7}},
                                       {"max_tokens", 9},
                                       {"stream", true},
                                       {"stream_options", {{"include_usage", true}}},
                                       {"temperature", 0},
                                       {"top_p", 0.5},
                                       {"seed", 3},
                                       {"stop", "\n"}});
    CHECK(t.prompt_tokens == std::vector<int>{5, 6, 7});
    CHECK(t.max_tokens == 9);
    CHECK(t.stream);
    CHECK(t.include_usage);
    CHECK(t.sampling.temperature == 0.0f);
    CHECK(t.sampling.top_p == 0.5f);
    CHECK(t.sampling.seed == 3);
    CHECK(t.stop == std::vector<std::string>{"\n"});
}

TEST_CASE("openai protocol: the plain chat template puts system text first and ends on the assistant's turn") {
    const CompletionRequest r = parse({{"model", "m"},
                                       {"messages", {{{"role", "user"}, {"content", "Hi"}},
                                                     {{"role", "system"}, {"content", "Be kind."}},
                                                     {{"role", "assistant"}, {"content", "Hello"}},
                                                     {{"role", "user"}, {"content", "A story?"}}}}},
                                      Endpoint::chat);
    CHECK(r.prompt_text == "Be kind.\n\nUser: Hi\nAssistant: Hello\nUser: A story?\nAssistant:");
}

TEST_CASE("openai protocol: refusals name the field") {
    const auto check = [](const std::string& body, int status, const std::string& param, Endpoint e = Endpoint::completions) {
        const ApiError err = refusal(body, e);
        INFO(body << " -> " << err.what());
        CHECK(err.status == status);
        CHECK(err.param == param);
        CHECK(error_body(err)["error"]["message"] == err.what());
    };
    check("not json", 400, "");
    check(R"({"prompt": "x"})", 400, "model");
    check(R"({"model": 7, "prompt": "x"})", 400, "model");
    check(R"({"model": "other", "prompt": "x"})", 404, "model");
    check(R"({"model": "m", "prompt": 7})", 400, "prompt");
    check(R"({"model": "m", "prompt": []})", 400, "prompt");
    check(R"({"model": "m", "prompt": "x", "max_tokens": 1.5})", 400, "max_tokens");
    check(R"({"model": "m", "prompt": "x", "max_tokens": -1})", 400, "max_tokens");
    // Numbers as JSON writes them: the message says what is wrong with this one.
    const auto message = [](const std::string& body) { return std::string(refusal(body, Endpoint::completions).what()); };
    // Valid JSON, a number out of range: said so, not "not valid JSON".
    CHECK(message(R"({"model": "m", "prompt": "x", "max_tokens": 1e400})") ==
          "a number in the body is out of range: number overflow parsing '1e400'");
    CHECK(message("{\"model\": ") .rfind("the body is not valid JSON: parse error at line 1, column 11", 0) == 0);
    CHECK(message(R"({"model": "m", "prompt": "x", "max_tokens": 2147483648})") ==
          "'max_tokens' is 2147483648; it must be from 1 to 2147483647");
    CHECK(message(R"({"model": "m", "prompt": "x", "max_tokens": 18446744073709551615})") ==
          "'max_tokens' is 18446744073709551615; it is too large");
    CHECK(message(R"({"model": "m", "prompt": "x", "max_tokens": 1e30})") == "'max_tokens' is 1e+30; it is too large");
    CHECK(message(R"({"model": "m", "prompt": "x", "max_tokens": 1.5})") == "'max_tokens' must be an integer, not a fraction");
    CHECK(parse_completion_request(R"({"model": "m", "prompt": "x", "max_tokens": 1E3})", Endpoint::completions, "m")
              .max_tokens == 1000);
    check(R"({"model": "m", "prompt": "x", "temperature": "hot"})", 400, "temperature");
    check(R"({"model": "m", "prompt": "x", "seed": "s"})", 400, "seed");
    // Seeds as the command line takes them: 0 to 2^64 − 1, a negative one
    // refused rather than wrapped to a large one.
    CHECK(message(R"({"model": "m", "prompt": "x", "seed": -1})") ==
          "'seed' is -1; it must be a whole number from 0 to 18446744073709551615");
    CHECK(message(R"({"model": "m", "prompt": "x", "seed": -9223372036854775808})") ==
          "'seed' is -9223372036854775808; it must be a whole number from 0 to 18446744073709551615");
    CHECK(message(R"({"model": "m", "prompt": "x", "seed": -9223372036854775809})") ==
          "'seed' is -9.22337e+18; it must be a whole number from 0 to 18446744073709551615");
    CHECK(message(R"({"model": "m", "prompt": "x", "seed": 18446744073709551616})") ==
          "'seed' is 1.84467e+19; it must be a whole number from 0 to 18446744073709551615");
    CHECK(parse_completion_request(R"({"model": "m", "prompt": "x", "seed": 18446744073709551615})", Endpoint::completions,
                                   "m")
              .sampling.seed == 18446744073709551615ULL);
    CHECK(parse_completion_request(R"({"model": "m", "prompt": "x", "seed": 7.0})", Endpoint::completions, "m")
              .sampling.seed == 7);
    // A field refused unless it asks for nothing: an empty suffix asks for nothing.
    CHECK(parse_completion_request(R"({"model": "m", "prompt": "x", "suffix": ""})", Endpoint::completions, "m")
              .prompt_text == "x");
    check(R"({"model": "m", "prompt": "x", "suffix": "end"})", 400, "suffix");
    check(R"({"model": "m", "prompt": "x", "stop": [""]})", 400, "stop");
    check(R"({"model": "m", "prompt": "x", "stop": ["a", "b", "c", "d", "e"]})", 400, "stop");
    check(R"({"model": "m", "prompt": [-1]})", 400, "prompt");
    check(R"({"model": "m", "prompt": [2147483648]})", 400, "prompt");
    check(R"({"model": "m", "prompt": "x", "temperature": 2.5})", 400, "temperature");
    check(R"({"model": "m", "prompt": "x", "top_p": 1.5})", 400, "top_p");
    // A negative penalty asks for something too (more repetition).
    check(R"({"model": "m", "prompt": "x", "frequency_penalty": -0.5})", 400, "frequency_penalty");
    check(R"({"model": "m", "prompt": "x", "presence_penalty": -1})", 400, "presence_penalty");
    check(R"({"model": "m", "prompt": "x", "stream": true, "stream_options": {"x": 1}})", 400, "stream_options.x");
    check(R"({"model": "m", "prompt": "x", "echo": true})", 400, "echo");
    check(R"({"model": "m", "prompt": "x", "best_of": 3})", 400, "best_of");
    check(R"({"model": "m", "prompt": "x", "messages": []})", 400, "messages");
    check(R"({"model": "m", "messages": [{"role": "user"}]})", 400, "messages[0].content", Endpoint::chat);
    check(R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", 400,
          "messages[0].content", Endpoint::chat);
    // A "type" that is not a string (found by fuzz_openai): a 400 naming the field, not json's type_error as a 500.
    check(R"({"model": "m", "messages": [{"role": "user", "content": [{"type": true, "text": "Hi"}]}]})", 400,
          "messages[0].content", Endpoint::chat);
    check(R"({"model": "m", "prompt": "x", "response_format": {"type": 7}})", 400, "response_format");
    check(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{}]})", 400, "tools",
          Endpoint::chat);
    check(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "prompt": "x"})", 400, "prompt",
          Endpoint::chat);
}

TEST_CASE("openai protocol: a batch of one prompt is that prompt, 1.0 is 1, and fields clients always send pass") {
    CHECK(parse({{"model", "m"}, {"prompt", Json::array({Json::array({5, 6})})}}).prompt_tokens == std::vector<int>{5, 6});
    CHECK(parse({{"model", "m"}, {"prompt", Json::array({"Hi"})}}).prompt_text == "Hi");
    CHECK(parse({{"model", "m"}, {"prompt", {5.0, 6}}}).prompt_tokens == std::vector<int>{5, 6});
    CHECK(parse({{"model", "m"}, {"prompt", "x"}, {"n", 1.0}, {"best_of", 1.0}}).prompt_text == "x");
    const Json chat = {{"model", "m"},
                       {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                       {"store", false},
                       {"metadata", Json::object({{"lesson", "17"}})},
                       {"parallel_tool_calls", true}};
    CHECK(parse(chat, Endpoint::chat).prompt_text.find("Hi") != std::string::npos);
    const auto message = [](const std::string& body, Endpoint e = Endpoint::completions) {
        return std::string(refusal(body, e).what());
    };
    CHECK(message(R"({"model": "m", "prompt": [[1, 2], [3]]})") == "one prompt per request: this list holds 2 prompts");
    CHECK(message(R"({"model": "m", "prompt": [[[1]]]})") == "'prompt' must be a string or a list of token ids, not an array");
    // Nesting stops at 32 levels while parsing, not after a DOM of 100,000.
    const auto nested = [](int levels) {
        return R"({"model": "m", "prompt": )" + std::string(static_cast<std::size_t>(levels), '[') + "1" +
               std::string(static_cast<std::size_t>(levels), ']') + "}";
    };
    CHECK(message(nested(100000)) == "the body nests objects and lists deeper than 32 levels");
    CHECK(message(nested(max_json_depth)) == "the body nests objects and lists deeper than 32 levels");
    CHECK(message(nested(max_json_depth - 1)) == "'prompt' must be a string or a list of token ids, not an array");
    CHECK(message(R"({"model": "m", "prompt": [1, "x"]})") == "'prompt[1]' must be a token id, not a string");
    CHECK(message(R"({"model": "m", "prompt": [1, 2.5]})") == "'prompt[1]' must be an integer, not a fraction");
    CHECK(message(R"({"model": "m", "prompt": [true]})") == "'prompt[0]' must be a token id or a text, not a boolean");
    // Every id outside the vocabulary in the same words, however far out.
    CHECK(message(R"({"model": "m", "prompt": [1, -1]})") == "prompt[1]: token id -1 is outside the vocabulary");
    CHECK(message(R"({"model": "m", "prompt": [-1e30]})") == "prompt[0]: token id -1e+30 is outside the vocabulary");
    CHECK(message(R"({"model": "m", "prompt": [18446744073709551615]})") ==
          "prompt[0]: token id 18446744073709551615 is outside the vocabulary");
    CHECK(message(R"({"model": "m", "prompt": "x", "n": 2})") == "'n' is not supported: one choice per request (n = 1)");
    CHECK(message(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "store": true})", Endpoint::chat) ==
          "'store' is not supported: nothing is stored");
    CHECK(message(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "metadata": 3})", Endpoint::chat) ==
          "'metadata' must be an object, not a number");
    // OpenAI's limits: 16 pairs of strings, keys to 64 characters, values to 512.
    const auto with_metadata = [](const std::string& m) {
        return R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "metadata": )" + m + "}";
    };
    CHECK(message(with_metadata(R"({"a": {"b": "c"}})"), Endpoint::chat) ==
          "'metadata' values must be strings, not an object");
    Json seventeen = Json::object();
    for (int i = 0; i < 17; ++i) seventeen[std::to_string(i)] = "v";
    CHECK(message(with_metadata(seventeen.dump()), Endpoint::chat) == "'metadata' holds 17 pairs; at most 16");
    CHECK(message(with_metadata(Json({{"k", std::string(513, 'v')}}).dump()), Endpoint::chat) ==
          "'metadata' keys hold at most 64 characters, values at most 512");
    std::string zh;
    for (int i = 0; i < 512; ++i) zh += "\u5b57";
    CHECK_NOTHROW(parse_completion_request(with_metadata(Json({{"k", zh}}).dump()), Endpoint::chat, "m"));
    CHECK(message(R"({"model": "m", "prompt": "x", "store": false})") == "unrecognized request argument: 'store'");
}

TEST_CASE("openai protocol: every range includes its ends") {
    const CompletionRequest r = parse({{"model", "m"},
                                       {"prompt", {0, 2147483647}},
                                       {"temperature", 2},
                                       {"top_p", 1},
                                       {"stop", {"a", "b", "c", "d"}}});
    CHECK(r.prompt_tokens == std::vector<int>{0, 2147483647});
    CHECK(r.sampling.temperature == 2.0f);
    CHECK(r.sampling.top_p == 1.0f);
    CHECK(r.stop.size() == 4);
    CHECK(parse({{"model", "m"}, {"prompt", "x"}, {"frequency_penalty", 0}, {"presence_penalty", 0.0}}).prompt_text ==
          "x");
    CHECK(error_type_for_status(500) == "server_error");
    CHECK(error_type_for_status(502) == "server_error");
    CHECK(error_type_for_status(499) == "invalid_request_error");
}

TEST_CASE("openai protocol: finish reasons and response shapes") {
    CHECK(finish_reason_of(sixstep::llm::StopReason::eos) == "stop");
    CHECK(finish_reason_of(sixstep::llm::StopReason::stop_string) == "stop");
    CHECK(finish_reason_of(sixstep::llm::StopReason::max_tokens) == "length");
    CompletionResult r{"cmpl-1", 100, "m", "hello", "length", 3, 2};
    const Json c = completion_response(Endpoint::completions, r);
    CHECK(c["choices"][0]["text"] == "hello");
    CHECK(c["usage"]["total_tokens"] == 5);
    const Json chat = completion_response(Endpoint::chat, r);
    CHECK(chat["choices"][0]["message"]["content"] == "hello");
    const Json first = completion_chunk(Endpoint::chat, {"c", 1, "m", "", "", 0, 0}, true, false);
    CHECK(first["choices"][0]["delta"]["role"] == "assistant");
    CHECK(first["choices"][0]["delta"]["content"] == "");  // the first delta has content, if only ""
    const Json later = completion_chunk(Endpoint::chat, {"c", 1, "m", "", "stop", 0, 0}, false, false);
    CHECK(later["choices"][0]["delta"] == Json::object());  // no role again, no empty content
    CHECK(first["choices"][0]["finish_reason"].is_null());
    CHECK_FALSE(first.contains("usage"));
    CHECK(usage_chunk(Endpoint::chat, r)["choices"].empty());
    // Any two counts add up without overflow (fuzz_openai's first finding).
    CHECK(usage_json(1, 2147483647)["total_tokens"] == 2147483648LL);
}

TEST_CASE("openai protocol: a refusal quotes a huge value cut, not whole") {
    // A million-digit max_tokens, a 900 KB key, model name or role were
    // echoed whole: a megabyte of error body (the key twice).
    const std::string huge(900 * 1024, 'k');
    const auto small = [](const ApiError& e) {
        INFO(e.message.substr(0, 200));
        CHECK(e.status >= 400);
        CHECK(e.message.size() < 1000);
        CHECK(e.param.size() < 1000);
        CHECK(e.message.find("bytes left out") != std::string::npos);
    };
    small(refusal(R"({"model": "m", "prompt": "x", "max_tokens": )" + std::string(1000000, '9') + "}"));
    small(refusal(R"({"model": "m", "prompt": "x", ")" + huge + R"(": 1})"));
    small(refusal(Json{{"model", huge}, {"prompt", "x"}}.dump()));
    small(refusal(Json{{"model", "m"}, {"messages", {{{"role", huge}, {"content", "x"}}}}}.dump(), Endpoint::chat));
    small(refusal(Json{{"model", "m"}, {"prompt", "x"}, {"stream", true}, {"stream_options", {{huge, true}}}}.dump()));
    // A short value is quoted whole.
    CHECK(refusal(R"({"model": "m", "prompt": "x", "colour": 1})").message == "unrecognized request argument: 'colour'");
}
