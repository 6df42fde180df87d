// LocalServer: sixstep's OpenAI-compatible server started inside the process
// on a loopback port the system picks (port 0), for a lesson that measures a
// real server without asking anyone to start one (lesson 17), and stopped
// when it is destroyed. The same engine and HTTP front as `sixstep serve`.
//
//     LocalServer s(llm.backend(), llm.codec(), {.model_id = "stories-3m-f16", .max_batch = 1});
//     run_load({.url = s.url(), …});
#pragma once
#include <memory>
#include <string>
#include <thread>

#include "app/server/http_server.h"
#include "pipeline/server/serving_engine.h"

namespace sixstep::server {

struct LocalServerParams {
    std::string model_id;  // the name /v1/models lists
    int max_batch = serving::SchedulerParams{}.max_batch;  // most requests running at once, >= 1
    int kv_blocks = llm::default_kv_blocks;            // KV pool, in blocks of llm::default_block_size positions
};

class LocalServer {
public:
    // backend and codec outlive the server. Throws sixstep::Error when it
    // cannot bind a loopback port.
    LocalServer(llm::Backend& backend, const llm::TextCodec& codec, const LocalServerParams& params);
    // Refuses new requests, cancels those in flight, closes the port.
    ~LocalServer();
    LocalServer(const LocalServer&) = delete;
    LocalServer& operator=(const LocalServer&) = delete;

    std::string url() const;  // http://127.0.0.1:PORT
    int port() const { return port_; }
    const LocalServerParams& params() const { return params_; }

private:
    LocalServerParams params_;
    std::unique_ptr<ServingEngine> engine_;
    std::unique_ptr<HttpServer> http_;
    std::thread listener_;
    int port_ = 0;
};

}  // namespace sixstep::server
