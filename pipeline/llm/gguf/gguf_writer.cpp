// GGUFWriter (see gguf_writer.h): serialises metadata and tensors in the GGUF
// v3 layout documented in gguf.h.
#include "pipeline/llm/gguf/gguf_writer.h"

#include <cstdio>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/file.h"
#include "pipeline/core/progress.h"

namespace sixstep::llm {

namespace {

class ByteSink {
public:
    std::vector<uint8_t> bytes;

    void put_raw(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        bytes.insert(bytes.end(), b, b + n);
    }
    template <typename T>
    void put(T x) {
        uint8_t buf[sizeof(T)];
        std::memcpy(buf, &x, sizeof(T));  // little-endian host
        put_raw(buf, sizeof(T));
    }
    void put_string(const std::string& s) {
        put<uint64_t>(s.size());
        put_raw(s.data(), s.size());
    }
    void pad_to(uint64_t alignment) { bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, 0); }
};

void put_value(ByteSink& out, const GGUFValue& v) {
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                out.put_string(x);
            } else if constexpr (std::is_same_v<T, GGUFArray>) {
                out.put<uint32_t>(static_cast<uint32_t>(x.type));
                out.put<uint64_t>(x.items.size());
                for (const auto& item : x.items) put_value(out, item);
            } else if constexpr (std::is_same_v<T, bool>) {
                out.put<uint8_t>(x ? 1 : 0);
            } else {
                out.put<T>(x);
            }
        },
        v.storage());
}

void check_array_types(const std::string& key, const GGUFValue& v) {
    if (!v.is_array()) return;
    const auto& a = v.as_array();
    for (size_t i = 0; i < a.items.size(); ++i) {
        if (a.items[i].type() != a.type)
            throw Error(fmt::format("GGUF writer: key {}: array of {} has a {} at index {}", key,
                                    gguf_type_name(a.type), gguf_type_name(a.items[i].type()), i));
        check_array_types(key, a.items[i]);
    }
}

}  // namespace

void GGUFWriter::set(std::string key, GGUFValue value) {
    check_array_types(key, value);
    if (key == "general.alignment") {
        const uint32_t al = value.type() == GGUFValueType::UINT32 ? value.as_u32() : 0;
        if (al == 0 || (al & (al - 1)) != 0)
            throw Error(fmt::format("GGUF writer: general.alignment must be a u32 power of two, got {}",
                                    value.to_display()));
        alignment_ = al;
    }
    for (auto& kv : kv_) {
        if (kv.key == key) {
            kv.value = std::move(value);
            return;
        }
    }
    kv_.push_back({std::move(key), std::move(value)});
}

void GGUFWriter::remove(std::string_view key) {
    std::erase_if(kv_, [&](const GGUFKeyValue& kv) { return kv.key == key; });
    if (key == "general.alignment") alignment_ = GGUF_DEFAULT_ALIGNMENT;
}

void GGUFWriter::set_alignment(uint32_t alignment) { set("general.alignment", GGUFValue(alignment)); }

void GGUFWriter::check_new_tensor(const std::string& name, GGMLType type, const std::vector<int64_t>& ne) const {
    if (name.empty()) throw Error("GGUF writer: a tensor needs a name");
    for (const auto& t : tensors_)
        if (t.name == name) throw Error(fmt::format("GGUF writer: tensor {} added twice", name));
    if (ne.empty() || ne.size() > 4)
        throw Error(fmt::format("GGUF writer: tensor {}: {} dimensions (must be 1 to 4)", name, ne.size()));
    for (size_t d = 0; d < ne.size(); ++d)
        if (ne[d] <= 0) throw Error(fmt::format("GGUF writer: tensor {}: ne[{}] = {}", name, d, ne[d]));
    if (ne[0] % ggml_block_size(type) != 0)
        throw Error(fmt::format("GGUF writer: tensor {}: ne[0] = {} is not a multiple of the {} block size {}", name,
                                ne[0], ggml_type_name(type), ggml_block_size(type)));
}

void GGUFWriter::add_tensor(std::string name, GGMLType type, std::vector<int64_t> ne, std::span<const float> data) {
    check_new_tensor(name, type, ne);
    int64_t n = 1;
    for (int64_t x : ne) n *= x;
    if (static_cast<int64_t>(data.size()) != n)
        throw Error(fmt::format("GGUF writer: tensor {}: {} values given for a shape of {} elements", name,
                                data.size(), n));
    std::vector<uint8_t> bytes;
    try {
        bytes = quantize(type, data.data(), n);
    } catch (const Error& e) {
        throw Error(fmt::format("GGUF writer: tensor {}: {}", name, e.message()));
    }
    tensors_.push_back({std::move(name), type, std::move(ne), std::move(bytes)});
}

void GGUFWriter::add_tensor_raw(std::string name, GGMLType type, std::vector<int64_t> ne,
                                std::span<const uint8_t> bytes) {
    check_new_tensor(name, type, ne);
    size_t expected = ggml_row_size(type, ne[0]);
    for (size_t d = 1; d < ne.size(); ++d) expected *= static_cast<size_t>(ne[d]);
    if (bytes.size() != expected)
        throw Error(fmt::format("GGUF writer: tensor {}: {} bytes given, a {} tensor of this shape needs {}", name,
                                bytes.size(), ggml_type_name(type), expected));
    tensors_.push_back({std::move(name), type, std::move(ne), {bytes.begin(), bytes.end()}});
}

// Everything before the data section (header, metadata, tensor infos,
// padding), plus each tensor's offset within the data section.
std::vector<uint8_t> GGUFWriter::head(std::vector<uint64_t>& offsets, uint64_t& data_size) const {
    ByteSink out;
    out.bytes.reserve(4096);  // also keeps GCC 12 from a false -Wstringop-overflow on the first insert
    out.put_raw("GGUF", 4);
    out.put<uint32_t>(GGUF_VERSION);
    out.put<uint64_t>(tensors_.size());
    out.put<uint64_t>(kv_.size());
    for (const auto& kv : kv_) {
        out.put_string(kv.key);
        out.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
        put_value(out, kv.value);
    }
    uint64_t offset = 0;
    offsets.clear();
    for (const auto& t : tensors_) {
        offset = (offset + alignment_ - 1) / alignment_ * alignment_;
        offsets.push_back(offset);
        out.put_string(t.name);
        out.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
        for (int64_t x : t.ne) out.put<uint64_t>(static_cast<uint64_t>(x));
        out.put<uint32_t>(static_cast<uint32_t>(t.type));
        out.put<uint64_t>(offset);
        offset += t.bytes.size();
    }
    // No tensors, no data section: skip the padding (a vocabulary-only file
    // with a huge general.alignment must not grow by that much).
    if (!tensors_.empty()) out.pad_to(alignment_);
    data_size = offset;
    return std::move(out.bytes);
}

std::vector<uint8_t> GGUFWriter::to_bytes() const {
    std::vector<uint64_t> offsets;
    uint64_t data_size = 0;
    std::vector<uint8_t> bytes = head(offsets, data_size);
    const size_t data_start = bytes.size();
    bytes.resize(data_start + data_size, 0);
    for (size_t i = 0; i < tensors_.size(); ++i)
        std::memcpy(bytes.data() + data_start + offsets[i], tensors_[i].bytes.data(), tensors_[i].bytes.size());
    return bytes;
}

void GGUFWriter::write(const std::filesystem::path& path) const {
    // Streamed (not via to_bytes) so a big model is not held twice in memory;
    // through a temporary file, so an error or Ctrl+C leaves no half a model.
    std::vector<uint64_t> offsets;
    uint64_t data_size = 0;
    const std::vector<uint8_t> header = head(offsets, data_size);
    AtomicFile f(path.string());
    f.write(header.data(), header.size());
    uint64_t at = 0;
    const std::vector<char> zeros(alignment_, 0);
    for (size_t i = 0; i < tensors_.size(); ++i) {
        report_progress("writing the model", i, tensors_.size());
        f.write(zeros.data(), static_cast<size_t>(offsets[i] - at));  // alignment padding
        f.write(tensors_[i].bytes.data(), tensors_[i].bytes.size());
        at = offsets[i] + tensors_[i].bytes.size();
    }
    f.commit();
}

}  // namespace sixstep::llm
