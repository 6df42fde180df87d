#include "pipeline/core/model.h"

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep {

const std::string* Request::get(std::string_view key) const {
    for (const auto& [k, v] : fields)
        if (k == key) return &v;
    return nullptr;
}

void Request::set(std::string key, std::string value) {
    for (auto& [k, v] : fields)
        if (k == key) {
            v = std::move(value);
            return;
        }
    fields.emplace_back(std::move(key), std::move(value));
}

void Request::erase(std::string_view key) {
    std::erase_if(fields, [&](const auto& f) { return f.first == key; });
}

std::uint64_t Model::checksum_as_loaded() const {
    if (!checksum_as_loaded_) checksum_as_loaded_ = weights_checksum();
    return *checksum_as_loaded_;
}

// For a model without settings every name is unknown, with the usual "did you
// mean"; a declared setting that the model does not apply is a bug, said so.
void Model::apply_setting(std::string_view setting_name, const std::string&) {
    const Knob& k = description().setting(setting_name);
    throw Error(fmt::format("{} declares the setting \"{}\" but does not apply it", name(), k.name));
}

std::string Model::setting(std::string_view setting_name) const {
    const Knob& k = description().setting(setting_name);
    throw Error(fmt::format("{} declares the setting \"{}\" but does not report it", name(), k.name));
}

std::optional<Value> Model::property(std::string_view) const { return std::nullopt; }

std::uint64_t checksum_bytes(const void* data, std::size_t size, std::uint64_t seed) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint64_t h = seed;
    for (std::size_t i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string checksum_hex(std::uint64_t sum) { return fmt::format("{:016x}", sum); }

}  // namespace sixstep
