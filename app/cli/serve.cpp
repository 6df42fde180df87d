// sixstep serve -m M.gguf [--host 127.0.0.1] [--port 8080] [--max-batch B] [--kv-blocks K] [--prefix-cache] …
// An OpenAI-compatible HTTP server for one model: the serving layer's
// continuous batching on the wall clock (pipeline/server), behind
// /v1/completions, /v1/chat/completions, /v1/models, /health and /metrics
// (app/server/http_server.h). Runs until SIGINT or SIGTERM, then refuses new
// requests, lets those in flight finish for --shutdown-grace seconds, cancels
// the rest, and exits 0.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "app/cli/commands.h"
#include "app/cli/validators.h"
#include "app/server/http_server.h"
#include "pipeline/core/error.h"
#include "pipeline/core/memory_size.h"
#include "pipeline/core/text.h"
#include "pipeline/server/serving_engine.h"
#include "pipeline/serving/quantity.h"

namespace sixstep::cli {

namespace {

struct ServeOptions {
    std::string model, host = "127.0.0.1", backend = "cpu", name;
    int port = 8080, n_ctx = 0, threads = 0;
    // the engine's own defaults, shown by --help
    int max_batch = serving::SchedulerParams{}.max_batch, step_tokens = serving::SchedulerParams{}.max_step_tokens;
    int kv_blocks = llm::default_kv_blocks, block_size = llm::default_block_size;
    int max_queue = 256, max_concurrent = 64, retry_after = 1;
    std::size_t max_body = 1 << 20;
    double shutdown_grace = 10;
    bool prefix_cache = false, name_given = false;
};

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

int run_serve(const ServeOptions& o) {
    if (o.shutdown_grace < 0) throw Error("--shutdown-grace: seconds >= 0");
    // "" listened on ::1 alone and printed http://:8080.
    if (o.host.empty()) throw Error("--host: give an address to listen on (127.0.0.1, ::1, or 0.0.0.0 for every one)");
    // Every prompt takes a position (its first token), so a context of 1
    // started a server that refused every request.
    if (o.n_ctx == 1) throw Error("--ctx 1: a prompt takes a position, leaving none for an answer; use 2 or more (0: the model's context)");
    // The id every client must send back: "" fell back to the file's name
    // without a word, and "   " or one with an escape sequence was taken.
    if (o.name_given && (o.name.empty() || o.name.find_first_not_of(' ') == std::string::npos ||
                         o.name.front() == ' ' || o.name.back() == ' ' || printable(o.name) != o.name || o.name.size() > 256))
        throw Error(fmt::format("--name \"{}\": a model id is 1 to 256 characters, no control characters and no "
                                "space at either end", printable_cut(o.name, 120)));
    const RunnableModel m = load_runnable_model(o.model, o.backend, o.threads);
    server::ServingEngineParams ep;
    ep.scheduler.max_batch = o.max_batch;
    ep.scheduler.max_step_tokens = o.step_tokens;
    ep.scheduler.prefix_cache = o.prefix_cache;
    ep.kv_blocks = o.kv_blocks;
    ep.block_size = o.block_size;
    ep.n_ctx = o.n_ctx;
    ep.max_queue = o.max_queue;
    server::HttpServerParams hp;
    hp.host = o.host;
    hp.port = o.port;
    hp.model_id = o.name.empty() ? std::filesystem::path(o.model).stem().string() : o.name;
    hp.max_body_bytes = o.max_body;
    hp.max_concurrent = o.max_concurrent;
    hp.retry_after_s = o.retry_after;

    server::ServingEngine engine(*m.backend, *m.codec, ep);
    // The pool fills block by block, and a server runs until it is full: one
    // larger than memory would end in the kernel's OOM killer mid-service.
    const std::size_t memory = usable_memory_bytes(), pool = engine.kv_pool_bytes();
    if (memory > 0 && pool > memory) {
        const std::size_t block = pool / static_cast<std::size_t>(o.kv_blocks);
        throw Error(fmt::format("--kv-blocks {} x --block-size {}: the KV pool holds {} when full, more than the {} of "
                                "memory here (which {} blocks of {} positions would fill)",
                                o.kv_blocks, o.block_size, serving::bytes_binary(pool), serving::bytes_binary(memory), memory / block,
                                o.block_size));
    }
    server::HttpServer http(engine, *m.codec, hp);
    const int port = http.bind();
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    std::printf("sixstep serve: model %s on http://%s:%d (max batch %d, %d KV blocks x %d, context %d, prefix cache %s)\n",
                printable_cut(hp.model_id, 300).c_str(),
                // An IPv6 address goes in brackets in a URL: http://[::1]:8080
                (hp.host.find(':') != std::string::npos ? "[" + printable(hp.host) + "]" : printable(hp.host)).c_str(), port, o.max_batch, o.kv_blocks, o.block_size, engine.n_ctx(),
                o.prefix_cache ? "on" : "off");
    std::fflush(stdout);
    std::promise<void> listened;
    std::future<void> listener_done = listened.get_future();
    std::thread listener([&] {
        http.listen();
        listened.set_value();
    });
    while (g_stop_signal == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));

    std::fprintf(stderr, "sixstep serve: %s: finishing %s in flight (up to %g s), then stopping\n",
                 g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
                 count_of(static_cast<std::size_t>(engine.n_in_flight()), "request", "requests").c_str(),
                 o.shutdown_grace);
    http.begin_shutdown();
    engine.stop(std::chrono::milliseconds(static_cast<long long>(o.shutdown_grace * 1000)));
    http.stop();  // after the handlers wrote their last chunks
    // The listener returns once every connection's thread is done. Reading
    // threads look at the stop every tenth of a second (connection_loop.h),
    // so a client still sending its request is dropped at once; a write to a
    // client that reads nothing may wait out the write timeout. Every answer
    // is out by now, so past a short wait the process ends without it.
    const bool listener_ended = listener_done.wait_for(std::chrono::seconds(2)) == std::future_status::ready;
    std::fprintf(stderr, "sixstep serve: stopped (%lld finished, %lld cancelled)\n",
                 engine.metrics().finished(llm::StopReason::eos) + engine.metrics().finished(llm::StopReason::max_tokens) +
                     engine.metrics().finished(llm::StopReason::stop_string),
                 engine.metrics().finished(llm::StopReason::cancelled));
    if (!listener_ended) {
        std::fprintf(stderr, "sixstep serve: dropped the connections that did not take their answers\n");
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(exit_ok);  // the listener's thread cannot be joined, nor left to a destructor
    }
    listener.join();
    return exit_ok;
}

}  // namespace

void add_serve(CLI::App& app, Commands& commands) {
    auto* sub = app.add_subcommand("serve", "An OpenAI-compatible HTTP server with continuous batching (loopback by default)");
    auto o = std::make_shared<ServeOptions>();
    sub->add_option("-m,--model", o->model, "A GGUF model (Llama architecture)")->required()->transform(model_file());
    sub->add_option("--host", o->host, "Address to listen on (127.0.0.1: this machine only)");
    sub->add_option("--port", o->port, "Port (0: any free one, printed at start)")->check(CLI::Range(0, 65535));
    sub->add_option("--name", o->name, "The model id clients must use (default: the file name without .gguf)")
        ->each([o](const std::string&) { o->name_given = true; });
    sub->add_option("--max-batch", o->max_batch, "Most requests running at once");
    sub->add_option("--kv-blocks", o->kv_blocks, "Blocks in the KV pool");
    sub->add_option("--block-size", o->block_size, "Positions per KV block");
    sub->add_option("--step-tokens", o->step_tokens, "Most tokens per forward pass (prefill chunks + decode)");
    sub->add_option("--ctx", o->n_ctx, "Most positions per request (0: the model's context)")
        ->check(CLI::Range(0, 1 << 24));
    sub->add_flag("--prefix-cache", o->prefix_cache, "Reuse KV blocks of identical prompt prefixes");
    sub->add_option("--max-queue", o->max_queue, "Requests that may wait to run; beyond: 429 with Retry-After");
    sub->add_option("--max-concurrent", o->max_concurrent, "Completions handled at once; beyond: 503 with Retry-After")
        ->check(CLI::Range(1, server::max_concurrent_limit));
    // Checked as a signed number first: -1 would wrap to "no limit".
    sub->add_option("--max-body", o->max_body, "Largest request body in bytes; beyond: 413")
        ->check(CLI::Range(1, 1 << 30));
    sub->add_option("--retry-after", o->retry_after, "Seconds to tell refused clients to wait")->check(CLI::Range(1, 3600));
    sub->add_option("--shutdown-grace", o->shutdown_grace, "On SIGINT/SIGTERM: seconds in-flight requests may finish")
        ->check(finite_number(0, 3600));
    add_threads_option(sub, o->threads);
    add_backend_option(sub, o->backend);
    add_examples(sub, {"sixstep serve -m stories-3m-f16.gguf --port 8080 --prefix-cache   # until Ctrl+C",
                      "curl -s http://127.0.0.1:8080/v1/completions -d '{\"model\": \"stories-3m-f16\", \"prompt\": \"Once upon a time\", \"max_tokens\": 16}'"});
    commands.push_back({sub, [o] { return run_serve(*o); }});
}

}  // namespace sixstep::cli
