// sixstep inspect FILE.gguf [--json] [--items N]
//   Prints a GGUF file's header, metadata (arrays abbreviated to their first
//   few elements and their count) and tensor table (name, type, shape, bytes,
//   offset), with totals. --json prints the same as one JSON object.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/validators.h"
#include "app/core/report.h"
#include "pipeline/core/text.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/serving/quantity.h"

namespace sixstep::cli {

namespace {

using sixstep::llm::GGUFFile;
using sixstep::llm::GGUFValue;
using sixstep::llm::GGUFValueType;

struct InspectOptions {
    std::string path;
    bool json = false;
    size_t items = 6;  // array elements shown
};

// "7.0M", "1.2B"
std::string human_count(uint64_t n) {
    if (n >= 1000000000) return fmt::format("{:.2f}B", static_cast<double>(n) / 1e9);
    if (n >= 1000000) return fmt::format("{:.2f}M", static_cast<double>(n) / 1e6);
    if (n >= 1000) return fmt::format("{:.1f}K", static_cast<double>(n) / 1e3);
    return std::to_string(n);
}

std::string type_desc(const GGUFValue& v) {
    if (v.is_array()) return fmt::format("arr[{}]", sixstep::llm::gguf_type_name(v.as_array().type));
    return std::string(sixstep::llm::gguf_type_name(v.type()));
}

nlohmann::ordered_json to_json(const GGUFValue& v, size_t max_items) {
    return std::visit(
        [&](const auto& x) -> nlohmann::ordered_json {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, sixstep::llm::GGUFArray>) {
                nlohmann::ordered_json items = nlohmann::ordered_json::array();
                for (size_t i = 0; i < x.items.size() && i < max_items; ++i) items.push_back(to_json(x.items[i], max_items));
                return {{"type", "arr"},
                        {"element_type", std::string(sixstep::llm::gguf_type_name(x.type))},
                        {"count", x.items.size()},
                        {"first", std::move(items)}};
            } else {
                return x;
            }
        },
        v.storage());
}

int run_inspect(const InspectOptions& o) {
    const GGUFFile f = GGUFFile::open(o.path);

    if (o.json) {
        nlohmann::ordered_json j;
        j["file"] = o.path;
        j["version"] = f.version();
        j["file_size"] = f.file_size();
        j["alignment"] = f.alignment();
        j["data_offset"] = f.data_offset();
        nlohmann::ordered_json meta = nlohmann::ordered_json::object();
        for (const auto& kv : f.metadata()) meta[kv.key] = {{"type", type_desc(kv.value)}, {"value", to_json(kv.value, o.items)}};
        j["metadata"] = std::move(meta);
        nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
        for (const auto& t : f.tensors())
            tensors.push_back({{"name", t.name},
                               {"type", std::string(sixstep::llm::ggml_type_name(t.type))},
                               {"shape", t.shape()},
                               {"n_elements", t.n_elements()},
                               {"bytes", t.n_bytes},
                               {"offset", t.offset},
                               {"supported", sixstep::llm::ggml_type_supported(t.type)}});
        j["tensors"] = std::move(tensors);
        j["totals"] = {{"n_tensors", f.tensors().size()}, {"n_params", f.n_params()}, {"bytes", f.n_tensor_bytes()}};
        // replace: a string in a file may be invalid UTF-8; show it, do not fail
        std::printf("%s\n", app::dump_json(j).c_str());
        return exit_ok;
    }

    std::printf("%s: GGUF v%u, %s, alignment %u, tensor data at byte %llu\n", printable(o.path).c_str(), f.version(),
                serving::bytes_binary(f.file_size()).c_str(), f.alignment(), static_cast<unsigned long long>(f.data_offset()));

    // Keys, names and values as the file wrote them, escaped; a key or name past
    // 80 bytes is cut (the table pads every row to the longest), a value past 1,000.
    const auto name_of = [](const std::string& name) { return printable_cut(name, 80); };
    size_t key_width = 0;
    for (const auto& kv : f.metadata()) key_width = std::max(key_width, name_of(kv.key).size());
    std::printf("\nmetadata (%zu keys)\n", f.metadata().size());
    for (const auto& kv : f.metadata())
        std::printf("  %-*s  %-8s %s\n", static_cast<int>(key_width), name_of(kv.key).c_str(), type_desc(kv.value).c_str(),
                    printable_cut(kv.value.to_display(o.items), 1000).c_str());

    std::printf("\ntensors (%zu)\n", f.tensors().size());
    if (!f.tensors().empty()) {
        size_t name_width = 4;
        for (const auto& t : f.tensors()) name_width = std::max(name_width, name_of(t.name).size());
        std::printf("  %-*s  %-7s %-22s %12s %12s\n", static_cast<int>(name_width), "name", "type", "shape", "bytes",
                    "offset");
        for (const auto& t : f.tensors()) {
            const bool ok = sixstep::llm::ggml_type_supported(t.type);
            std::printf("  %-*s  %-7s %-22s %12llu %12llu%s\n", static_cast<int>(name_width), name_of(t.name).c_str(),
                        std::string(sixstep::llm::ggml_type_name(t.type)).c_str(), t.shape_str().c_str(),
                        static_cast<unsigned long long>(t.n_bytes), static_cast<unsigned long long>(t.offset),
                        ok ? "" : "  (not supported for compute)");
        }
    }
    std::printf("\ntotal: %zu tensors, %s parameters (%llu), %s of tensor data\n", f.tensors().size(),
                human_count(f.n_params()).c_str(), static_cast<unsigned long long>(f.n_params()),
                serving::bytes_binary(f.n_tensor_bytes()).c_str());
    return exit_ok;
}

}  // namespace

void add_inspect(CLI::App& app, Commands& commands) {
    auto o = std::make_shared<InspectOptions>();
    auto* sub = app.add_subcommand("inspect", "Print a GGUF file's metadata and tensor table");
    sub->add_option("file", o->path, "the GGUF file")->required()->transform(model_file());
    sub->add_flag("--json", o->json, "print one JSON object instead of tables");
    sub->add_option("--items", o->items, "array elements to show (default 6)")->check(CLI::Range(0, 1000000));
    add_examples(sub, {"sixstep inspect stories-3m-f16.gguf",
                      "sixstep inspect --json stories-draft-f16.gguf"});
    commands.push_back({sub, [o] { return run_inspect(*o); }});
}

}  // namespace sixstep::cli
