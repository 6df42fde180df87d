// llama.cpp's prefill and decode speed through its C API, timed the way
// `sixstep bench` times its own: ppN is one batch of N prompt tokens from an
// empty cache, tgN is N single-token decodes from an empty cache; a warm-up
// run, then the median (and range) of REPS runs. For machines where
// llama-bench itself is not at hand but llama.cpp's sources are (built as a
// library of your own choosing of flags). Not part of the build:
//
//   # against a llama.cpp checkout built with cmake (shared libraries, its default):
//   c++ -O2 -std=c++17 tools/llama_timing.cpp -I LLAMA/include -I LLAMA/ggml/include \
//       -L LLAMA/build/bin -Wl,-rpath,LLAMA/build/bin -lllama -lggml -lggml-base -o llama_timing
//   ./llama_timing MODEL.gguf THREADS PP TG REPS
//
// (README's figures: llama.cpp's sources as the npm package llama.rn ships
// them, compiled into one static library with the flags README gives.)
//
// Prints "llama.cpp pp128 5098.2 tok/s (min … max …)" lines; tools/vs-llama.sh
// runs it beside sixstep.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <vector>

#include "llama.h"

namespace {

double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void report(const char* test, int n, std::vector<double> tok_s) {
    std::sort(tok_s.begin(), tok_s.end());
    std::printf("llama.cpp %s%d %.1f tok/s (min %.1f max %.1f)\n", test, n, tok_s[tok_s.size() / 2], tok_s.front(),
                tok_s.back());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: llama_timing MODEL.gguf THREADS PP TG REPS\n");
        return 2;
    }
    const int n_threads = std::atoi(argv[2]), pp = std::atoi(argv[3]), tg = std::atoi(argv[4]),
              reps = std::atoi(argv[5]);
    if (n_threads < 1 || pp < 0 || tg < 0 || reps < 1) {
        std::fprintf(stderr, "llama_timing: THREADS and REPS must be >= 1, PP and TG >= 0\n");
        return 2;
    }
    // llama.cpp would block reading a FIFO or a device: regular files only.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(argv[1], ec)) {
        std::fprintf(stderr, "llama_timing: %s is not a regular file\n", argv[1]);
        return 2;
    }
    // A generic lambda converts to the logger's pointer type whatever the
    // enum is called in this copy of the headers.
    llama_log_set([](auto, const char*, void*) {}, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        std::fprintf(stderr, "llama_timing: llama.cpp could not load %s\n", argv[1]);
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = static_cast<uint32_t>(pp + tg + 16);
    cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(std::max(pp, 1));
    cp.n_threads = cp.n_threads_batch = n_threads;
    cp.no_perf = true;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        std::fprintf(stderr, "llama_timing: no context for %s\n", argv[1]);
        return 1;
    }
    // Random token ids, as llama-bench uses.
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    std::vector<llama_token> tokens(static_cast<std::size_t>(std::max(pp, tg)) + 1);
    std::mt19937 rng(1);
    for (llama_token& t : tokens) t = static_cast<llama_token>(rng() % static_cast<unsigned>(n_vocab));

    const auto prefill = [&] {
        llama_memory_clear(llama_get_memory(ctx), true);
        const double t0 = seconds();
        llama_decode(ctx, llama_batch_get_one(tokens.data(), pp));
        llama_synchronize(ctx);
        return pp / (seconds() - t0);
    };
    const auto decode = [&] {
        llama_memory_clear(llama_get_memory(ctx), true);
        const double t0 = seconds();
        for (int i = 0; i < tg; ++i) {
            llama_decode(ctx, llama_batch_get_one(&tokens[static_cast<std::size_t>(i)], 1));
            llama_synchronize(ctx);
        }
        return tg / (seconds() - t0);
    };
    if (pp > 0) {
        prefill();
        std::vector<double> v;
        for (int r = 0; r < reps; ++r) v.push_back(prefill());
        report("pp", pp, v);
    }
    if (tg > 0) {
        decode();
        std::vector<double> v;
        for (int r = 0; r < reps; ++r) v.push_back(decode());
        report("tg", tg, v);
    }
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
