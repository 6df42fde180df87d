#include <fmt/format.h>

#include "app/cli/commands.h"
#include "pipeline/core/error.h"

namespace sixstep::cli {

void add_backend_option(CLI::App* sub, std::string& value) {
    sub->add_option("--backend", value,
                    "Where the forward pass runs: cpu, cuda, or auto (a GPU when one is usable, else the CPU)")
        ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
}

llm::BackendKind backend_kind(const std::string& value) {
    if (const auto kind = llm::parse_backend_kind(value)) return *kind;
    throw Error(fmt::format("--backend {}: expected cpu, cuda or auto", value));
}

}  // namespace sixstep::cli
