// sixstep bench --batch 1,2,4,8,16,32,64 --model F.gguf [--context 128]
//                [--steps 32] [-r 3] [-t THREADS] [--json]
//   Batched decode (serving/batch_sweep.h): tokens/s and TPOT per batch size,
//   KV bytes vs weight bytes per step, the knee, and the roofline prediction
//   from the machine's measured roofs (tools/machine_peaks.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sixstep::cli {

struct BenchBatchOptions {
    std::string model;                // the GGUF file
    std::string backend = "cpu";      // cpu, cuda or auto
    std::vector<int> batch_sizes;     // sequences per decode step
    int n_context = 128;              // tokens per sequence before the timed steps
    int n_steps = 32;                 // timed decode steps per run
    int repetitions = 3;              // timed runs per batch size (median kept)
    int threads = 0;                  // CPU threads (0: the backend's default)
    std::uint64_t seed = 1;           // random token ids
    bool json = false;
};

// The load average over the last minute (-1 where the system has none),
// printed beside benchmark figures: a busy machine is the first suspect when
// they look wrong.
double load_average();

// Runs the sweep and prints it as a table or JSON; returns the exit code.
// Throws sixstep::Error on bad input.
int run_bench_batch(const BenchBatchOptions& options);

}  // namespace sixstep::cli
