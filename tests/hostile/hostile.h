// Helpers for the hostile-input suite: scratch files of every kind (FIFOs,
// folders, links), the binary run with a time limit so that a hang fails
// the test instead of stalling the suite, and GGUF models rewritten with one
// thing broken.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/types.h>

#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/gguf/gguf_writer.h"
#include "pipeline/tools/random_model.h"
#include "run_command.h"
#include "temp_dir.h"

namespace sixstep::test {

namespace fs = std::filesystem;

inline fs::path scratch() { return process_temp_dir("hostile"); }

// A FIFO: opening it for reading blocks until someone writes.
inline std::string make_fifo(const std::string& name) {
    const fs::path p = scratch() / name;
    fs::remove(p);
    ::mkfifo(p.c_str(), 0600);
    return p.string();
}

inline std::string write_text(const std::string& name, const std::string& text) {
    const fs::path p = scratch() / name;
    FILE* f = std::fopen(p.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return p.string();
}

// The sixstep binary with a time limit: a hang ends as exit code 124.
inline CommandResult run_sixstep(const std::string& args, int seconds = 20) {
    return run_command("timeout -s KILL " + std::to_string(seconds) + " " + sixstep_cmd(args));
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Starts sixstep with stdin from `in` (empty: inherited), stdout to `out` and
// stderr to `err` (the same path: together), SIGINT at its default
// disposition (a test runner may have it ignored). Returns the pid.
pid_t spawn_sixstep(const std::vector<std::string>& args, const std::string& in, const std::string& out,
                    const std::string& err);

// Waits for the process; its exit code (−1 if killed) and peak memory.
struct Finished {
    int exit_code = -1;
    long max_rss_kb = 0;
};
Finished wait_for_exit(pid_t pid);

// The tiny random model (a complete Llama GGUF with a gpt2 vocabulary).
inline std::string tiny_model() {
    const fs::path p = scratch() / "tiny.gguf";
    if (!fs::exists(p)) llm::write_random_model(p, llm::random_model_preset("tiny"));
    return p.string();
}

// A copy of a GGUF file through the writer, with `meta` free to change each
// metadata value (return false to drop the key) and `bytes` each tensor's data.
inline std::vector<uint8_t> rewrite_gguf(
    const llm::GGUFFile& f, const std::function<bool(const std::string&, llm::GGUFValue&)>& meta,
    const std::function<void(const llm::GGUFTensorInfo&, std::vector<uint8_t>&)>& bytes) {
    llm::GGUFWriter w;
    for (const auto& kv : f.metadata()) {
        llm::GGUFValue v = kv.value;
        if (meta(kv.key, v)) w.set(kv.key, v);
    }
    for (const auto& t : f.tensors()) {
        std::vector<uint8_t> b(t.data, t.data + t.n_bytes);
        bytes(t, b);
        w.add_tensor_raw(t.name, t.type, t.shape(), b);
    }
    return w.to_bytes();
}

}  // namespace sixstep::test
