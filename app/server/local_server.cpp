#include "app/server/local_server.h"

#include <chrono>

namespace sixstep::server {

LocalServer::LocalServer(llm::Backend& backend, const llm::TextCodec& codec, const LocalServerParams& params)
    : params_(params) {
    ServingEngineParams ep;
    ep.scheduler.max_batch = params.max_batch;
    ep.kv_blocks = params.kv_blocks;
    engine_ = std::make_unique<ServingEngine>(backend, codec, ep);
    HttpServerParams hp;
    hp.host = "127.0.0.1";
    hp.port = 0;
    hp.model_id = params.model_id;
    http_ = std::make_unique<HttpServer>(*engine_, codec, hp);
    port_ = http_->bind();
    listener_ = std::thread([this] { http_->listen(); });
}

LocalServer::~LocalServer() {
    // The order of `sixstep serve`'s shutdown, with no grace: a lesson that
    // is closed does not wait for its load to finish.
    http_->begin_shutdown();
    engine_->stop(std::chrono::milliseconds(0));
    http_->stop();
    listener_.join();
}

std::string LocalServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

}  // namespace sixstep::server
