#include <fmt/format.h>

#include <cstdio>
#include <set>
#include <string>

#include "app/cli/commands.h"
#include "pipeline/core/error.h"
#include "pipeline/llm/cpu/thread_pool.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::cli {

CLI::Option* add_threads_option(CLI::App* sub, int& value, const std::string& what, const std::string& more) {
    return sub
        ->add_option("-t,--threads", value,
                     fmt::format("{} (0: one per physical core, at most {}){}", what,
                                 llm::ThreadPool::max_default_threads, more))
        ->check(CLI::Range(0, 1024));
}

CLI::Option* add_backend_option(CLI::App* sub, std::string& value) {
    return sub
        ->add_option("--backend", value,
                     "Where the forward pass runs: cpu, cuda, or auto (a GPU when one is usable, else the CPU)")
        ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
}

void print_backend_note(const std::string& note) {
    // A target and its draft (speculate, generate --draft) each choose a
    // backend: the same "no CUDA; using the CPU" twice said nothing new.
    static std::set<std::string> printed;
    if (note.empty() || !printed.insert(note).second) return;
    std::fprintf(stderr, "sixstep: %s\n", note.c_str());
}

llm::BackendKind backend_kind(const std::string& value) {
    if (const auto kind = llm::parse_backend_kind(value)) return *kind;
    throw Error(fmt::format("--backend {}: expected cpu, cuda or auto", value));
}

int RunnableModel::bos() const { return vocab->add_bos() ? vocab->bos() : -1; }

RunnableModel load_runnable_model(const std::string& path, const std::string& backend, int n_threads) {
    using namespace sixstep::llm;
    RunnableModel m;
    m.model = LlamaModel::load(path);
    try {
        m.vocab = std::make_shared<const Vocab>(Vocab::from_gguf(m.model->file()));
    } catch (const Error& e) {
        throw e.with_context(fmt::format("error loading model vocabulary from {}", path));
    }
    BackendChoice choice = make_backend(backend_kind(backend), m.model, {.n_threads = n_threads});
    print_backend_note(choice.note);
    m.backend = std::move(choice.backend);
    m.codec = make_vocab_codec(m.vocab);
    return m;
}

}  // namespace sixstep::cli
