// EndpointModel: a real OpenAI-compatible server behind the six-stage Model
// interface (the `endpoint` kind; its description is
// pipeline/server/endpoint_description.h). Lesson 17 uses it to put a server
// under Poisson load at several arrival rates and show the measured queueing
// curve beside the serving lab's prediction for the same rates.
//
// The server is the lesson's own — the bundled model served in-process on an
// ephemeral loopback port (local_server.h), stopped with the model — or, with
// `url`, any other OpenAI-compatible server (llama-server, vLLM), untouched.
//
//   1 request      the loads to send (utilizations), requests per rate, max_tokens
//   2 load         start the own server (weights mapped once), or reach the url
//   3 forward      time the service: `samples` requests one after another
//                  (TTFT alone), then `samples` kept queued (the gaps between
//                  their completions: the service rate); then, for each
//                  utilization ρ, send `requests` requests at rate ρ ÷ service
//                  time (load_generator.h)
//   4 output       per rate: measured TTFT p50/p90/p99 and throughput, and the
//                  prediction — lesson 09's single-server queue (M/G/1) fed
//                  the same arrival times, services drawn from the measured
//                  ones (at the pace the own server kept during that rate's
//                  run, when it runs one request at a time):
//                  TTFT = simulated wait + the TTFT of a request alone
//   5 postprocess  the relations a lesson claims (growth, measured ÷ predicted)
//   6 respond      one paragraph
//
// The rates are derived from the service time measured here, so the same
// lesson loads a fast and a slow machine, or another server, alike.
//
//     EndpointModel m({.url = "http://127.0.0.1:8080"});
//     Request r;  r.set("utilizations", "0.2,0.5,0.8");
//     Pipeline p(m, r);  p.run();
//     p.trace().lookup("postprocess.ttft_p90_growth");
#pragma once
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/model.h"

namespace sixstep::llm {
class Backend;
class LlmModel;
}

namespace sixstep::server {

class LocalServer;

struct EndpointModelParams {
    std::filesystem::path file;  // the GGUF model the lesson's own server serves (when url is empty)
    std::string url;             // another server, http://host:port; "" → start the own server
    int n_threads = 0;           // the own server's CPU threads; <= 0 → the backend's default
    // The own server's backend put inside another before it serves (a test's
    // slower one); empty: the model's own.
    std::function<std::unique_ptr<llm::Backend>(llm::Backend&)> wrap_backend;
};

// One arrival rate of the sweep.
struct EndpointPoint {
    double utilization = 0;           // asked for
    double rate = 0;                  // req/s sent: utilization ÷ service time
    int n_sent = 0, n_failed = 0;
    double ttft_p50_ms = 0, ttft_p90_ms = 0, ttft_p99_ms = 0;  // measured at the client
    double itl_p50_ms = 0;            // median gap between streamed chunks, pooled over requests
    double tpot_p50_ms = 0;           // median over requests of (E2E − TTFT) ÷ (tokens − 1)
    double request_throughput = 0;    // completed ÷ duration, req/s
    double output_throughput = 0;     // tok/s
    double service_ms = 0;              // the pace during this run (queued_service_ms), else the timed service
    bool service_measured = false;      // service_ms came from this run (own server, one at a time, enough queued)
    double predicted_wait_ms = 0;     // mean, M/G/1 simulated on the same arrivals
    double predicted_ttft_p50_ms = 0, predicted_ttft_p90_ms = 0, predicted_ttft_p99_ms = 0;
    double predicted_throughput = 0;  // req/s

    // ρ at the pace kept (over 1: the server falls behind); NaN where the
    // pace was not read.
    double utilization_measured() const {
        return service_measured ? rate * service_ms / 1000.0 : std::numeric_limits<double>::quiet_NaN();
    }
};

// What the sweep measured, for the window's panel.
struct EndpointExhibit : Exhibit {
    std::string url, served_model;
    bool own_server = false;
    int max_batch = 0;                // the own server's; 0 with a url
    double service_ms = 0;            // mean gap between completions, saturated: 1 ÷ the service rate
    double service_scv = 0;           // the gaps' c²
    double alone_ttft_ms = 0;         // median TTFT of a request alone
    std::vector<EndpointPoint> points;  // ascending rate
};

class EndpointModel : public sixstep::Model {
public:
    explicit EndpointModel(EndpointModelParams params);
    ~EndpointModel() override;  // stops the own server

    std::string name() const override;
    bool loaded() const override;
    void load(TraceEvent& ev) override;
    std::uint64_t weights_checksum() const override;
    // Another server's weights are out of reach: no checksum to show.
    bool has_weights() const override { return own_server(); }
    std::unique_ptr<Job> start(const Request& request) override;
    const ModelDescription& description() const override;
    std::shared_ptr<const Exhibit> exhibit() const override { return exhibit_; }

    // For the job: the server's address and the model it serves (after load).
    const std::string& url() const { return url_; }
    const std::string& served_model() const { return served_model_; }
    bool own_server() const { return params_.url.empty(); }
    int max_batch() const;  // the own server's, 0 with a url
    void want_max_batch(int b) { wanted_max_batch_ = b; }  // the next load (re)starts the own server so
    void set_exhibit(std::shared_ptr<const EndpointExhibit> e) { exhibit_ = std::move(e); }

private:
    EndpointModelParams params_;
    std::unique_ptr<llm::LlmModel> llm_;    // the own server's weights (null with a url)
    std::unique_ptr<llm::Backend> wrapped_; // params_.wrap_backend's, around llm_'s backend
    std::unique_ptr<LocalServer> server_;   // after llm_: stopped before the weights go
    std::string url_, served_model_;
    int wanted_max_batch_ = 1;
    std::shared_ptr<const EndpointExhibit> exhibit_;
};

}  // namespace sixstep::server
