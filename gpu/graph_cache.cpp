#include "gpu/graph_cache.h"

#include "gpu/cuda_check.h"
#include "pipeline/core/env_choice.h"

namespace sixstep::gpu {

namespace {

void destroy(cudaGraphExec_t exec) {
    if (exec) static_cast<void>(cudaGraphExecDestroy(exec));
}

// Captures what `enqueue` queues on `stream` and instantiates it. On any
// failure the capture is ended (and its partial graph dropped) before the
// error goes on, so the stream takes ordinary launches again.
cudaGraphExec_t capture(cudaStream_t stream, const std::function<void()>& enqueue) {
    // Thread-local: other threads' CUDA calls (a second backend, the host
    // reading logits) neither join nor break this capture.
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
        enqueue();
    } catch (...) {
        cudaGraph_t partial = nullptr;
        if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial) static_cast<void>(cudaGraphDestroy(partial));
        static_cast<void>(cudaGetLastError());  // the capture's error is reported by the exception
        throw;
    }
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    static_cast<void>(cudaGraphDestroy(graph));  // the executable graph keeps what it needs
    CUDA_CHECK(instantiated);
    return exec;
}

}  // namespace

GraphCache::~GraphCache() { clear(); }

void GraphCache::clear() {
    for (Entry& e : entries_) destroy(e.exec);
    entries_.clear();
}

void GraphCache::run(const Key& key, cudaStream_t stream, const std::function<void()>& enqueue) {
    Entry* entry = nullptr;
    for (Entry& e : entries_)
        if (e.key.n_tokens == key.n_tokens && e.key.n_outputs == key.n_outputs) entry = &e;
    if (!entry || entry->key != key) {
        cudaGraphExec_t exec = capture(stream, enqueue);
        ++captures_;
        if (!entry) entry = &entries_.emplace_back();
        destroy(entry->exec);
        entry->key = key;
        entry->exec = exec;
    }
    CUDA_CHECK(cudaGraphLaunch(entry->exec, stream));
    ++launches_;
}

bool cuda_graphs_from_environment() { return env_choice("SIXSTEP_CUDA_GRAPHS", {"on", "off"}) == "on"; }

}  // namespace sixstep::gpu
