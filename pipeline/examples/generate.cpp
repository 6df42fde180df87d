// The engine as a library, in one page: load a GGUF model, tokenize a prompt,
// generate a few tokens greedily and print the time to first token. Only
// sixstep_pipeline is linked — no lessons, no CLI, no UI.
//
//     build/release/pipeline/examples/example_generate [MODEL.gguf] [PROMPT] [N]
//
// Defaults: the bundled story model, "The cat sat on the", 8 tokens.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "pipeline/core/data_dir.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/generator.h"
#include "pipeline/llm/llama_model.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/llm/vocab/vocab.h"

using namespace sixstep::llm;

int main(int argc, char** argv) try {
    const std::string path =
        argc > 1 ? argv[1] : sixstep::data_path("assets/models/stories-3m-f16.gguf").string();
    const std::string prompt = argc > 2 ? argv[2] : "The cat sat on the";
    const int n_predict = argc > 3 ? std::stoi(argv[3]) : 8;

    // The weights: a read-only memory map, shared by every backend.
    const auto model = LlamaModel::load(path);
    const LlamaHparams& hp = model->hparams();
    std::printf("model: %s, %d layers, n_embd %d, n_vocab %d\n", path.c_str(), hp.n_layer, hp.n_embd, hp.n_vocab);

    // The tokenizer stored in the same file.
    const auto codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(model->file())));
    std::printf("prompt: \"%s\" ->", prompt.c_str());
    for (int id : codec->encode(prompt)) std::printf(" %d", id);
    std::printf("\n");

    // Where the forward pass runs (a GPU when one was built and is present,
    // else the CPU), and the generation loop on top of it.
    BackendChoice choice = make_backend(BackendKind::auto_select, model, {.n_threads = 2});
    std::printf("backend: %s%s%s\n", choice.backend->name().c_str(), choice.note.empty() ? "" : " — ",
                choice.note.c_str());
    Generator gen(*choice.backend, *codec);
    GenerateParams params;
    params.n_predict = n_predict;
    params.sampling.temperature = 0;  // greedy: the same text every run
    std::printf("%s", prompt.c_str());
    const GenerateResult r = gen.generate(prompt, params, [](const TokenEvent& e) {
        std::printf("%s", e.text.c_str());  // streamed as each token completes
        std::fflush(stdout);
        return true;
    });
    std::printf("\n%d tokens, stop: %s, TTFT %.2f ms, TPOT %.2f ms\n", r.timings.n_generated, std::string(sixstep::llm::stop_reason_name(r.stop_reason)).c_str(),
                r.timings.ttft_ms, r.timings.tpot_ms);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "example_generate: %s\n", e.what());
    return 2;
}
