// The CLI's commands. Each lives in its own file under app/cli/ and registers
// itself on the CLI11 app; main.cpp only wires them together.
//
// Exit codes, for every command: 0 success; 1 a check or expectation failed;
// 2 bad input (a broken lesson, file, argument or request); 130 interrupted
// (Ctrl+C, as shells report SIGINT).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipeline/llm/backend.h"
#include "pipeline/llm/text_codec.h"

namespace sixstep::llm {
class Vocab;
}

namespace sixstep::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_bad_input = 2;
inline constexpr int exit_interrupted = 130;

// A registered subcommand and what to run when it was chosen.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};
using Commands = std::vector<Command>;

void add_infer(CLI::App& app, Commands& commands);     // sixstep infer delivery ...
void add_check(CLI::App& app, Commands& commands);     // sixstep check PATH...
void add_generate(CLI::App& app, Commands& commands);  // sixstep generate --model F --prompt T
void add_tokenize(CLI::App& app, Commands& commands);  // sixstep tokenize --model F TEXT
void add_bench(CLI::App& app, Commands& commands);     // sixstep bench --model F
void add_inspect(CLI::App& app, Commands& commands);   // sixstep inspect F.gguf
void add_queue(CLI::App& app, Commands& commands);     // sixstep queue --service-ms X | --model F
void add_screenshot(CLI::App& app, Commands& commands);  // sixstep screenshot LESSON --out DIR
void add_kv_calc(CLI::App& app, Commands& commands);     // sixstep kv-calc --layers 36 --kv-heads 8 --head-dim 128 ...
void add_bill(CLI::App& app, Commands& commands);        // sixstep bill --preset stories-3m
void add_quantize(CLI::App& app, Commands& commands);    // sixstep quantize IN.gguf OUT.gguf --type q4_0
void add_perplexity(CLI::App& app, Commands& commands);  // sixstep perplexity -m F.gguf [--ref R.gguf]
void add_paths(CLI::App& app, Commands& commands);       // sixstep paths [--model KIND] [--json]
void add_traffic(CLI::App& app, Commands& commands);     // sixstep traffic --model F --rate R …
void add_speculate(CLI::App& app, Commands& commands);   // sixstep speculate -m T.gguf --draft D.gguf --k 1,2,4,8
void add_coldstart(CLI::App& app, Commands& commands);   // sixstep coldstart -m F.gguf
void add_waits(CLI::App& app, Commands& commands);       // sixstep waits -m F.gguf
void add_canary(CLI::App& app, Commands& commands);      // sixstep canary --fraction 0.1
void add_serve(CLI::App& app, Commands& commands);       // sixstep serve --model F [--port P]
void add_load(CLI::App& app, Commands& commands);        // sixstep load --url U --rate R --requests N

// Command lines a reader can copy, shown under "Examples:" at the end of the
// command's --help, after any footer it has. Bundled models go by name (they
// are found from any folder); paths like lessons/… are the source tree's.
// tests/app/cli/test_cli_examples.cpp runs every one of them.
void add_examples(CLI::App* sub, std::initializer_list<const char*> lines);

// `-t,--threads N` for the commands that run the model: "{what} (0: one per
// physical core, at most 8){more}".
// Returns the option, for a command that refuses it in some combinations.
CLI::Option* add_threads_option(CLI::App* sub, int& value, const std::string& what = "Threads", const std::string& more = "");

// `--backend cpu|cuda|auto` for the commands that run the model, and its value.
CLI::Option* add_backend_option(CLI::App* sub, std::string& value);
llm::BackendKind backend_kind(const std::string& value);
// A backend choice's note ("no CUDA …; using the CPU") on stderr, each note once per process.
void print_backend_note(const std::string& note);

// A GGUF model ready to run: weights, vocabulary (as a codec), and the backend
// chosen by --backend (its note, if any, printed once on stderr).
struct RunnableModel {
    std::shared_ptr<llm::LlamaModel> model;
    std::shared_ptr<const llm::Vocab> vocab;
    std::unique_ptr<llm::TextCodec> codec;
    std::unique_ptr<llm::Backend> backend;
    int bos() const;  // the token prompts start with, -1 when the model adds none
};
RunnableModel load_runnable_model(const std::string& path, const std::string& backend, int n_threads);

// Runs fn, turning a sixstep::Error (or any std::exception) into one clear
// message on stderr and exit code 2, and Ctrl+C (sixstep::Cancelled) into 130.
int guarded(const std::function<int()>& fn);

}  // namespace sixstep::cli
