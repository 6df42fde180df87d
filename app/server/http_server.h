// HttpServer: the OpenAI-compatible HTTP front of a ServingEngine
// (pipeline/server/serving_engine.h), on cpp-httplib.
//
//   POST /v1/completions, POST /v1/chat/completions   whole answers or server-sent events
//   GET  /v1/models    the one served model
//   GET  /health       {"status": "ok"} (503 while shutting down)
//   GET  /metrics      Prometheus text (server_metrics.h)
//
// Each HTTP connection has a thread of its own (connection_loop.h); a
// completion handler submits to the engine and then waits on its
// RequestStream, writing chunks as tokens come. A streaming client that goes
// away is noticed at a write after it left (a keep-alive comment goes out
// every second while nothing else does) and its request is cancelled, which
// gives its KV blocks back.
//
// Limits, each with an OpenAI-style error body:
//   body over max_body_bytes                    413
//   more than max_concurrent completions at once 503 + Retry-After
//   engine queue full (ServingEngineParams::max_queue) 429 + Retry-After
//   a request that stops arriving for read_timeout_s, or has not arrived
//   whole request_timeout_s after its first byte     408, and closed
// Errors: 400 bad field (named), 404 unknown model or path, 405 wrong method,
// 500 a bug (the message, never a crash).
//
// Shutdown: begin_shutdown() makes new completions 503 and /health 503;
// the engine then finishes or cancels what is in flight (its stop(grace));
// each stream ends with its last chunk and [DONE] (or an error event);
// stop() closes the listener once the handlers are done.
//
//     HttpServer http(engine, codec, {.model_id = "stories-3m-f16"});
//     int port = http.bind();      // port 0 → an ephemeral one
//     std::thread t([&] { http.listen(); });
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/llm/text_codec.h"
#include "pipeline/server/serving_engine.h"

namespace httplib {
class Server;
struct Request;
struct Response;
class ContentReader;
}  // namespace httplib

namespace sixstep::server {

// openai_protocol.h
enum class Endpoint;
struct CompletionRequest;
struct CompletionResult;

// The most completions handled at once: each holds one of the server's
// threads (a stack of its own), and beyond a few thousand a system refuses
// to start them.
inline constexpr int max_concurrent_limit = 1024;
// The most connections served at once, each on a thread of its own (those
// beyond wait for one): enough that slow clients do not keep the rest out.
inline constexpr int max_connection_threads = 1024;

struct HttpServerParams {
    std::string host = "127.0.0.1";  // loopback: only this machine can reach it
    int port = 8080;                 // 0 → any free port (bind() says which)
    std::string model_id;            // the name /v1/models lists and requests must use
    std::size_t max_body_bytes = 1 << 20;  // bigger request bodies get 413
    int max_concurrent = 64;         // completions handled at once; beyond → 503, >= 1
    int retry_after_s = 1;           // the Retry-After of 429 and 503 answers, seconds
    int read_timeout_s = 10;         // a client silent this long mid-request gets 408
    int request_timeout_s = 30;      // a request (line, headers, body) must arrive within this of its first byte, else 408
    int write_timeout_s = 10;        // a client that reads nothing this long is dropped
};

class HttpServer {
public:
    // engine and codec outlive the server. Throws sixstep::Error for bad params.
    HttpServer(ServingEngine& engine, const llm::TextCodec& codec, HttpServerParams params);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    int bind();     // binds host:port and returns the port; throws sixstep::Error when it cannot
    void listen();  // serves until stop(); call after bind()
    void begin_shutdown();  // refuse new completions from now on
    // Waits (up to wait_ms) for the completion handlers to finish writing,
    // then closes the listener; listen() returns.
    void stop(int wait_ms = 5000);
    int n_active() const { return n_active_.load(); }  // completions being handled

private:
    // The completion routes' handler, and its steps in the order a request
    // meets them (http_server.cpp).
    void serve_completion(Endpoint endpoint, const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader& content_reader);
    bool admit(httplib::Response& res);
    EngineRequest engine_request(const CompletionRequest& cr, Endpoint endpoint) const;
    std::vector<int> checked_prompt(const CompletionRequest& cr, Endpoint endpoint) const;
    int checked_max_tokens(const CompletionRequest& cr, Endpoint endpoint, int n_prompt) const;
    std::shared_ptr<RequestStream> submit(EngineRequest er, httplib::Response& res);
    void stream_answer(const httplib::Request& req, httplib::Response& res, Endpoint endpoint,
                       std::shared_ptr<RequestStream> stream, const CompletionResult& base, bool include_usage);

    ServingEngine& engine_;
    const llm::TextCodec& codec_;
    HttpServerParams params_;
    std::unique_ptr<httplib::Server> http_;
    std::atomic<int> n_active_{0};
    std::atomic<bool> shutting_down_{false};
    int listen_fd_ = -1;  // the listening socket, once bound
};

}  // namespace sixstep::server
