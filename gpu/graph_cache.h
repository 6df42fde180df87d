// GraphCache: a forward pass's kernels captured once as a CUDA graph and
// replayed for every later pass of the same shape.
//
// Decoding one token of the 1.1B model queues about 225 kernels; launched one
// by one from the host, each costs a few microseconds of launch work, which
// is as long as the whole step's weight reading takes on an HBM GPU. A graph
// is launched with one call and the GPU runs its kernels back to back.
//
// A replay repeats the captured launches exactly: the same grids, the same
// arguments. So a graph is kept per key — the batch's shape (tokens and
// output rows, which set grid sizes and offsets into the batch's metadata)
// and every device address and size the kernels were given (scratch buffers
// that may have grown, the KV cache's block pointer array and block size). What changes from step to
// step — tokens, positions, block tables, the KV cache's contents — lives in
// device memory the kernels read when they run, uploaded before each replay.
//
//     GraphCache graphs;
//     graphs.run(key, stream, [&] { enqueue_kernels(stream); });  // captured, then launched
//     graphs.run(key, stream, [&] { enqueue_kernels(stream); });  // launched; the lambda is not called
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

namespace sixstep::gpu {

class GraphCache {
public:
    struct Key {
        int n_tokens = 0;
        int n_outputs = 0;
        std::vector<std::uintptr_t> arguments;  // every device address and size the captured kernels were given
        bool operator==(const Key&) const = default;
    };

    GraphCache() = default;
    ~GraphCache();
    GraphCache(const GraphCache&) = delete;
    GraphCache& operator=(const GraphCache&) = delete;

    // Queues the work `enqueue` would queue on `stream`: replays the graph
    // kept for `key`, or captures `enqueue` into a new one first (replacing
    // the graph of the same shape whose addresses differ). `enqueue` must
    // only queue work on `stream`: no allocation, no synchronization, no
    // other stream. Throws sixstep::Error when capturing or launching fails;
    // the stream is never left capturing.
    void run(const Key& key, cudaStream_t stream, const std::function<void()>& enqueue);

    // Destroys every graph (the device they were made on must be current).
    void clear();

    int captures() const { return captures_; }
    long long launches() const { return launches_; }
    std::size_t size() const { return entries_.size(); }

private:
    struct Entry {
        Key key;
        cudaGraphExec_t exec = nullptr;
    };
    std::vector<Entry> entries_;  // one per shape (n_tokens, n_outputs)
    int captures_ = 0;
    long long launches_ = 0;
};

// SIXSTEP_CUDA_GRAPHS: "on" (the default) or "off" (every kernel launched on
// its own: what a measurement compares the graphs against). Any other value
// throws sixstep::Error naming it.
bool cuda_graphs_from_environment();

}  // namespace sixstep::gpu
