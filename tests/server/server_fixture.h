// A real sixstep server on loopback for the tests: the bundled story model
// (small enough to answer in milliseconds), the serving engine, and the HTTP
// front on an ephemeral port, plus a cpp-httplib client that speaks to it the
// way an OpenAI client does (JSON bodies, server-sent events).
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "app/server/http_server.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/server/serving_engine.h"

namespace sixstep::test {

inline const std::string bundled_model_file = std::string(SIXSTEP_SOURCE_DIR) + "/assets/models/stories-3m-f16.gguf";
inline const std::string served_model_id = "stories-3m-f16";

struct TestServer {
    std::shared_ptr<llm::LlamaModel> model;
    std::shared_ptr<const llm::Vocab> vocab;
    std::unique_ptr<llm::TextCodec> codec;
    std::unique_ptr<llm::Backend> backend;
    std::unique_ptr<server::ServingEngine> engine;
    std::unique_ptr<server::HttpServer> http;
    std::thread listener;
    int port = 0;

    explicit TestServer(server::ServingEngineParams ep = {}, server::HttpServerParams hp = {}) {
        model = llm::LlamaModel::load(bundled_model_file);
        vocab = std::make_shared<const llm::Vocab>(llm::Vocab::from_gguf(model->file()));
        codec = llm::make_vocab_codec(vocab);
        backend = llm::make_backend(llm::BackendKind::cpu, model, {.n_threads = 1}).backend;
        engine = std::make_unique<server::ServingEngine>(*backend, *codec, ep);
        hp.port = 0;
        hp.model_id = served_model_id;
        http = std::make_unique<server::HttpServer>(*engine, *codec, hp);
        port = http->bind();
        listener = std::thread([this] { http->listen(); });
    }
    ~TestServer() { shutdown(std::chrono::milliseconds(0)); }
    void shutdown(std::chrono::milliseconds grace) {
        if (!listener.joinable()) return;
        http->begin_shutdown();
        engine->stop(grace);
        http->stop(5000);
        listener.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

struct HttpAnswer {
    int status = 0;  // 0: no answer (connection error)
    std::string body;
    httplib::Headers headers;
    nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

inline HttpAnswer http_post(int port, const std::string& path, const std::string& body,
                            const std::string& content_type = "application/json") {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    auto r = c.Post(path.c_str(), body, content_type.c_str());
    if (!r) return {};
    return {r->status, r->body, r->headers};
}

inline HttpAnswer http_get(int port, const std::string& path) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    auto r = c.Get(path.c_str());
    if (!r) return {};
    return {r->status, r->body, r->headers};
}

// A streamed answer split into its events.
struct SseAnswer {
    int status = 0;
    std::string raw;                   // the whole body as it came
    std::vector<nlohmann::json> data;  // each data event's JSON ([DONE] excluded)
    bool done = false;                 // ended with data: [DONE]
    std::string error;                 // the client's error, if the exchange failed
    std::string text() const {         // the streamed text, joined
        std::string t;
        for (const auto& d : data) {
            if (!d.contains("choices") || d["choices"].empty()) continue;
            const auto& c = d["choices"][0];
            if (c.contains("text")) t += c["text"].get<std::string>();
            if (c.contains("delta") && c["delta"].contains("content")) t += c["delta"]["content"].get<std::string>();
        }
        return t;
    }
};

// Posts with "stream": true; stop_after_bytes > 0 hangs up once that much came.
inline SseAnswer http_stream(int port, const std::string& path, const std::string& body, std::size_t stop_after_bytes = 0) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    SseAnswer a;
    httplib::Request req;
    req.method = "POST";
    req.path = path;
    req.body = body;
    req.set_header("Content-Type", "application/json");
    req.response_handler = [&](const httplib::Response& r) {
        a.status = r.status;
        return true;
    };
    req.content_receiver = [&](const char* d, std::size_t n, std::uint64_t, std::uint64_t) {
        a.raw.append(d, n);
        return stop_after_bytes == 0 || a.raw.size() < stop_after_bytes;
    };
    httplib::Response res;
    httplib::Error err;
    if (!c.send(req, res, err)) a.error = httplib::to_string(err);
    std::size_t pos = 0, end;
    while ((end = a.raw.find("\n\n", pos)) != std::string::npos) {
        const std::string ev = a.raw.substr(pos, end - pos);
        pos = end + 2;
        if (ev.rfind("data: ", 0) != 0) continue;
        const std::string payload = ev.substr(6);
        if (payload == "[DONE]") a.done = true;
        else a.data.push_back(nlohmann::json::parse(payload, nullptr, false));
    }
    return a;
}

}  // namespace sixstep::test
