// The load generator: an open-loop benchmark client for any OpenAI-compatible
// server (sixstep serve, llama.cpp's llama-server, vLLM). Requests are sent
// at Poisson arrival times (serving/arrivals.h) whatever the server's state —
// open loop: a slow server is not given time to recover, which is what makes
// its queue visible — each streaming (SSE) from its own thread, and every
// chunk is timed on arrival. It is bounded: a fixed count or duration, at most
// max_in_flight requests open at once (an arrival that finds them all busy
// waits, and is counted as late), each with a timeout; it stops by itself.
//
// The figures follow vLLM's `bench serve` definitions, measured at the client
// (serving notes: ../shared/SERVING-NOTES.md):
//   TTFT  first streamed chunk with text − request sent
//   TPOT  (E2E − TTFT) / (output tokens − 1), per request
//   ITL   every gap between streamed text chunks, pooled over requests
//   E2E   request sent → last chunk received
// Output tokens are the server's usage.completion_tokens when it sends usage
// (stream_options.include_usage), else the number of text chunks.
//
//     LoadParams p;  p.url = "http://127.0.0.1:8080";  p.rate = 4;  p.n_requests = 100;
//     LoadReport r = run_load(p);   r.latency("ttft").summary.p99;
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/serving/traffic_metrics.h"

namespace sixstep::server {

// Rates a load test can keep: below one request in 1,000 s it is no load,
// above a million a second no client or server here keeps up.
inline constexpr double min_rate = 1e-3, max_rate = 1e6;
// The longest a run's arrivals may span: a day.
inline constexpr double max_span_ms = 24 * 3600e3;
// The most tokens an answer may be asked for (and a server may report, for
// an answer or a prompt): past any model's context, and what the figures
// can hold per request.
inline constexpr int max_load_tokens = 1 << 20;

struct LoadParams {
    std::string url;                   // http://host:port (a trailing /v1 is allowed)
    std::string model;                 // "" → the first model GET /v1/models lists
    bool chat = false;                 // /v1/chat/completions instead of /v1/completions
    double rate = 1;                   // mean requests per second (Poisson), > 0
    double duration_s = 0;             // send for this long; or
    int n_requests = 0;                // send this many (exactly one of the two is set)
    std::vector<std::string> prompts;  // used in turn; empty → the serving lab's story openings
    int max_tokens = 64;               // per request, >= 1
    double temperature = 0;            // 0: greedy, so runs compare
    std::uint64_t seed = 1;            // of the arrival times
    // With n_requests: the drawn gaps scaled so the last request is due at
    // n ÷ rate, the mean gap exactly 1 ÷ rate. A short Poisson run is
    // otherwise as dense as its draw (40 requests came 1.5× the rate asked
    // for in lesson 17): the shape of the burst is kept, its rate is the one
    // a chart's axis says.
    bool exact_rate = false;
    int max_in_flight = 256;           // most requests open at once, >= 1
    double timeout_s = 60;             // a request open this long is abandoned and counted failed
};

// One request as the client saw it. Times in ms from the start of the run.
struct LoadRequest {
    double scheduled_ms = 0;       // its Poisson arrival time
    double sent_ms = -1;           // when it was sent (later than scheduled when late)
    std::vector<double> chunk_ms;  // each streamed chunk that carried text
    double done_ms = -1;           // the stream ended ([DONE]) or failed
    int n_output = 0;              // output tokens (usage, else text chunks)
    int n_prompt = 0;              // prompt tokens (usage; 0 when the server did not say)
    bool ok = false;
    std::string error;             // why not ok: "HTTP 429: …", "timeout", …
};

struct LoadReport {
    std::vector<LoadRequest> requests;
    std::vector<serving::LatencyMetric> latencies;  // ttft, tpot, itl, e2e (ms), over successful requests
    std::vector<serving::Metric> totals;            // throughputs, counts
    std::string model;                               // the model it asked for
    const serving::LatencyMetric& latency(const std::string& key) const;  // throws sixstep::Error
    const serving::Metric& total(const std::string& key) const;
};

// Throws sixstep::Error for bad parameters or an unreachable server (before
// sending any load). Failed requests are counted, not thrown.
LoadReport run_load(const LoadParams& params);

// The parts of --url: "http://127.0.0.1:8080/v1" → {"http://127.0.0.1:8080", "/v1"}.
struct ServerUrl {
    std::string origin;  // scheme://host:port
    std::string base;    // the path before /completions ("/v1")
};
// Where a url was given: its errors name it the way the user wrote it.
enum class UrlGiven {
    option,      // the CLI's option: "--url ftp://x: use http://HOST:PORT …"
    lesson_key,  // a lesson's `url:` (the loader adds the position): "url \"ftp://x\": use http://HOST:PORT …"
};
ServerUrl parse_server_url(const std::string& url, UrlGiven given = UrlGiven::option);  // throws sixstep::Error

// The id of the first model GET /v1/models lists: a server that answers it
// is up and speaks the protocol. Throws sixstep::Error ("cannot reach …").
std::string first_served_model(const std::string& url);

}  // namespace sixstep::server
