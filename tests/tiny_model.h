// A tiny random-weight Llama model (real forward passes, 512 byte-level
// tokens) with its codec and a CPU backend: the common ground of the
// generation, stepper, panel and serving tests. The file is written once per
// test process and context length.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "temp_dir.h"

#include "pipeline/llm/backend.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/llm/vocab/vocab.h"
#include "pipeline/tools/random_model.h"

namespace sixstep::test {

struct TinyModel {
    std::shared_ptr<llm::LlamaModel> model;
    std::shared_ptr<const llm::Vocab> vocab;
    std::unique_ptr<llm::TextCodec> codec;
    std::unique_ptr<llm::Backend> backend;
    int bos() const { return vocab->add_bos() ? vocab->bos() : -1; }

    explicit TinyModel(int n_ctx = 128) {
        const std::filesystem::path path =
            process_temp_dir("tiny-model") / ("tiny-" + std::to_string(n_ctx) + ".gguf");
        if (!std::filesystem::exists(path)) {
            llm::RandomModelParams p = llm::random_model_preset("tiny");
            p.n_ctx = n_ctx;
            llm::write_random_model(path, p);
        }
        model = llm::LlamaModel::load(path);
        vocab = std::make_shared<const llm::Vocab>(llm::Vocab::from_gguf(model->file()));
        codec = llm::make_vocab_codec(vocab);
        backend = llm::make_backend(llm::BackendKind::cpu, model, {.n_threads = 2}).backend;
    }
};

}  // namespace sixstep::test
