#include "pipeline/models.h"

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/suggest.h"
#include "pipeline/delivery/delivery_model.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/server/endpoint_description.h"
#include "pipeline/serving/serving_model.h"
#include "pipeline/tools/random_model.h"

namespace sixstep {

namespace {

// A new model kind adds one line here.
const std::vector<const ModelDescription*>& descriptions() {
    static const std::vector<const ModelDescription*> all = {&delivery::DeliveryModel::describe(),
                                                             &llm::LlmModel::describe(),
                                                             &serving::ServingModel::describe(),
                                                             &server::endpoint_description()};
    return all;
}

}  // namespace

const std::vector<std::string>& model_kinds() {
    static const std::vector<std::string> kinds = [] {
        std::vector<std::string> k;
        for (const ModelDescription* d : descriptions()) k.push_back(d->kind);
        return k;
    }();
    return kinds;
}

const ModelDescription* find_model_description(std::string_view kind) {
    for (const ModelDescription* d : descriptions())
        if (d->kind == kind) return d;
    return nullptr;
}

const ModelDescription& model_description(std::string_view kind) {
    if (const ModelDescription* d = find_model_description(kind)) return *d;
    throw Error(fmt::format("unknown model kind \"{}\"{} (known: {})", kind, did_you_mean(kind, model_kinds()),
                            join_names(model_kinds())));
}

bool reads_gguf(std::string_view kind) { return kind == "llm" || kind == "serving"; }

std::unique_ptr<Model> make_gguf_model(std::string_view kind, const GgufModelOptions& o) {
    if (!reads_gguf(kind)) throw Error(fmt::format("the {} model does not read a GGUF file", kind));
    const std::filesystem::path file = o.random.empty() ? o.file : llm::cached_random_model(o.random);
    if (kind == "llm") {
        llm::LlmModelParams p;
        p.n_threads = o.n_threads;
        p.top_n = o.top_n;
        p.backend = o.backend;
        return std::make_unique<llm::LlmModel>(file, p);
    }
    return std::make_unique<serving::ServingModel>(serving::ServingModelParams{file, o.n_threads, o.backend});
}

}  // namespace sixstep
