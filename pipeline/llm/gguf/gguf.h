// GGUF — the model file format of the llama.cpp / ggml ecosystem: a reader
// (memory-mapped, read-only, everything validated) and the value type shared
// with the writer (gguf_writer.h).
//
// On-disk layout (version 3; version 2 is identical; all integers little-endian):
//
//   header
//     char[4]   magic          "GGUF"
//     u32       version        3
//     u64       n_tensors
//     u64       n_kv
//   n_kv metadata entries
//     string    key            (u64 length + bytes, no NUL; e.g. "llama.block_count")
//     u32       value_type     GGUFValueType
//     value                    scalar | string | array:
//                                u32 element_type, u64 count, count values
//                                (arrays may nest: an element may itself be an array)
//   n_tensors tensor infos
//     string    name           e.g. "blk.3.attn_q.weight"
//     u32       n_dims         1..4
//     u64[n_dims] ne           ne[0] is the innermost (contiguous) dimension
//     u32       type           GGMLType (ggml_type.h)
//     u64       offset         from the start of the data section; multiple of alignment
//   padding to `alignment`     general.alignment (u32) if present, else 32
//   data section               tensor bytes, each tensor at its aligned offset
//
// Usage:
//   auto f = GGUFFile::open("model.gguf");
//   uint32_t n_layer = f.get_u32("llama.block_count");
//   float eps = f.get_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
//   const GGUFTensorInfo& wq = f.tensor("blk.0.attn_q.weight");
//   // wq.type, wq.ne[0] (n_embd), wq.ne[1], wq.data (n_bytes, read-only)
//
// Every error is a sixstep::Error naming the file and what is wrong, with the
// byte offset for structural errors, e.g.
//   "model.gguf: tensor blk.3.attn_q.weight: data [4096, 8192) is beyond the
//    end of the file (size 6000)".
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "pipeline/llm/gguf/ggml_type.h"

namespace sixstep::llm {

inline constexpr uint32_t GGUF_DEFAULT_ALIGNMENT = 32;
inline constexpr uint32_t GGUF_VERSION = 3;

// The value types, numbered as on disk.
enum class GGUFValueType : uint32_t {
    UINT8 = 0,
    INT8 = 1,
    UINT16 = 2,
    INT16 = 3,
    UINT32 = 4,
    INT32 = 5,
    FLOAT32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    UINT64 = 10,
    INT64 = 11,
    FLOAT64 = 12,
};
// "u32", "str", "arr", ... (short names as shown by `sixstep inspect`).
std::string_view gguf_type_name(GGUFValueType t);

class GGUFValue;

// Hash for string-keyed maps that can be searched with a string_view.
struct GGUFStringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// An array: its element type and its elements (each of that type; nested
// arrays have element type ARRAY).
struct GGUFArray {
    GGUFValueType type = GGUFValueType::UINT8;
    std::vector<GGUFValue> items;
    bool operator==(const GGUFArray& o) const;
};

// One metadata value. The variant's index equals the GGUFValueType number.
class GGUFValue {
public:
    using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                                 std::string, GGUFArray, uint64_t, int64_t, double>;

    GGUFValue() : v_(uint8_t{0}) {}
    // Scalars keep their exact C++ type: GGUFValue(uint32_t(5)) is a UINT32.
    GGUFValue(uint8_t x) : v_(x) {}
    GGUFValue(int8_t x) : v_(x) {}
    GGUFValue(uint16_t x) : v_(x) {}
    GGUFValue(int16_t x) : v_(x) {}
    GGUFValue(uint32_t x) : v_(x) {}
    GGUFValue(int32_t x) : v_(x) {}
    GGUFValue(float x) : v_(x) {}
    GGUFValue(bool x) : v_(x) {}
    GGUFValue(uint64_t x) : v_(x) {}
    GGUFValue(int64_t x) : v_(x) {}
    GGUFValue(double x) : v_(x) {}
    // long long / unsigned long long are distinct from int64_t / uint64_t on
    // LP64 Linux; without these, GGUFValue(1LL) would be ambiguous.
    GGUFValue(long long x) : v_(static_cast<int64_t>(x)) {}
    GGUFValue(unsigned long long x) : v_(static_cast<uint64_t>(x)) {}
    GGUFValue(std::string x) : v_(std::move(x)) {}
    GGUFValue(std::string_view x) : v_(std::string(x)) {}
    GGUFValue(const char* x) : v_(std::string(x)) {}
    GGUFValue(GGUFArray x) : v_(std::move(x)) {}
    // Typed arrays: std::vector<std::string> -> array of STRING, etc.
    GGUFValue(const std::vector<std::string>& xs);
    GGUFValue(const std::vector<float>& xs);
    GGUFValue(const std::vector<int32_t>& xs);
    GGUFValue(const std::vector<uint32_t>& xs);
    GGUFValue(const std::vector<int64_t>& xs);
    GGUFValue(const std::vector<uint8_t>& xs);
    GGUFValue(const std::vector<bool>& xs);
    // An array of arbitrary element type (elements must all be of `type`).
    static GGUFValue array(GGUFValueType type, std::vector<GGUFValue> items);

    GGUFValueType type() const { return static_cast<GGUFValueType>(v_.index()); }
    bool is_array() const { return type() == GGUFValueType::ARRAY; }
    bool is_string() const { return type() == GGUFValueType::STRING; }
    bool is_integer() const;  // any of the 8 integer types (not bool)
    bool is_float() const;    // FLOAT32 or FLOAT64

    // Conversions; throw sixstep::Error("expected ..., found ...") on a type
    // mismatch or when an integer does not fit.
    uint64_t as_u64() const;  // any integer type with a non-negative value
    int64_t as_i64() const;   // any integer type that fits in int64
    uint32_t as_u32() const;
    int32_t as_i32() const;
    double as_f64() const;    // FLOAT32 or FLOAT64
    float as_f32() const;
    bool as_bool() const;
    const std::string& as_string() const;
    const GGUFArray& as_array() const;

    // Array helpers (throw if not an array / elements do not convert).
    size_t size() const { return as_array().items.size(); }
    const GGUFValue& operator[](size_t i) const { return as_array().items.at(i); }
    std::vector<std::string> to_strings() const;
    std::vector<float> to_f32s() const;
    std::vector<int32_t> to_i32s() const;
    std::vector<int64_t> to_i64s() const;

    // Human-readable; arrays show their first `max_items` elements and count:
    // "[arr str × 32000: \"<unk>\", \"<s>\", \"</s>\", ...]". Strings are quoted
    // and escaped and cut to max_chars.
    std::string to_display(size_t max_items = 6, size_t max_chars = 80) const;

    const Storage& storage() const { return v_; }
    bool operator==(const GGUFValue& o) const;

private:
    Storage v_;
};

// One key/value pair of the metadata, in file order.
struct GGUFKeyValue {
    std::string key;
    GGUFValue value;
};

// A tensor's description, and where its bytes are.
struct GGUFTensorInfo {
    std::string name;
    GGMLType type = GGMLType::F32;
    uint32_t n_dims = 0;                   // 1..4
    std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] innermost; dims beyond n_dims are 1
    uint64_t offset = 0;                   // from the start of the data section
    uint64_t n_bytes = 0;                  // ggml_row_size(type, ne[0]) * ne[1] * ne[2] * ne[3]
    const uint8_t* data = nullptr;         // read-only, valid while the GGUFFile lives

    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
    size_t row_bytes() const { return ggml_row_size(type, ne[0]); }
    std::span<const uint8_t> bytes() const { return {data, static_cast<size_t>(n_bytes)}; }
    // "[4096, 32000]" (n_dims entries, ne[0] first, as ggml and llama.cpp print).
    std::string shape_str() const;
    // The shape as a vector of n_dims entries.
    std::vector<int64_t> shape() const { return {ne.begin(), ne.begin() + n_dims}; }
    // Throws "tensor <name>: type q4_K is not supported by sixstep (...)".
    void require_supported() const;
    // Dequantized copy (F32/F16/BF16/Q8_0/Q4_0; others throw the "unsupported" error).
    std::vector<float> to_f32() const;
};

namespace gguf_detail {
class Cursor;  // gguf.cpp: reads the bytes in order, for parse()
}

class GGUFFile {
public:
    // Memory-maps the file read-only and parses it. Throws sixstep::Error.
    static GGUFFile open(const std::filesystem::path& path);
    // Parses bytes the caller keeps alive for the GGUFFile's lifetime (no copy).
    static GGUFFile from_buffer(const void* data, size_t size, std::string name = "<memory>");
    // Parses bytes it takes ownership of.
    static GGUFFile from_bytes(std::vector<uint8_t> bytes, std::string name = "<memory>");

    GGUFFile(GGUFFile&&) noexcept;
    GGUFFile& operator=(GGUFFile&&) noexcept;
    GGUFFile(const GGUFFile&) = delete;
    GGUFFile& operator=(const GGUFFile&) = delete;
    ~GGUFFile();

    const std::string& name() const { return name_; }  // the path as given, or "<memory>"
    uint32_t version() const { return version_; }
    uint32_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; }  // where the data section starts
    size_t file_size() const { return size_; }

    // ---- metadata ----
    const std::vector<GGUFKeyValue>& metadata() const { return kv_; }
    bool has(std::string_view key) const { return find(key) != nullptr; }
    const GGUFValue* find(std::string_view key) const;  // nullptr when absent
    const GGUFValue& get(std::string_view key) const;   // throws "missing key"

    // Typed getters: throw when the key is missing or has the wrong type
    // ("model.gguf: key llama.block_count: expected an integer, found str").
    // The overloads with a fallback return it when the key is absent (a wrong
    // type still throws: a present-but-wrong value is a broken file).
    uint32_t get_u32(std::string_view key) const;
    uint32_t get_u32(std::string_view key, uint32_t fallback) const;
    int32_t get_i32(std::string_view key) const;
    int32_t get_i32(std::string_view key, int32_t fallback) const;
    uint64_t get_u64(std::string_view key) const;
    uint64_t get_u64(std::string_view key, uint64_t fallback) const;
    float get_f32(std::string_view key) const;
    float get_f32(std::string_view key, float fallback) const;
    bool get_bool(std::string_view key) const;
    bool get_bool(std::string_view key, bool fallback) const;
    std::string get_str(std::string_view key) const;
    std::string get_str(std::string_view key, std::string_view fallback) const;
    std::vector<std::string> get_arr_str(std::string_view key) const;
    std::vector<float> get_arr_f32(std::string_view key) const;
    std::vector<int32_t> get_arr_i32(std::string_view key) const;
    // std::nullopt when absent.
    std::optional<uint32_t> find_u32(std::string_view key) const;

    // general.architecture ("llama"), or "" when absent.
    std::string architecture() const;

    // ---- tensors (in file order) ----
    const std::vector<GGUFTensorInfo>& tensors() const { return tensors_; }
    const GGUFTensorInfo* find_tensor(std::string_view name) const;  // nullptr when absent
    const GGUFTensorInfo& tensor(std::string_view name) const;       // throws "no tensor named"
    uint64_t n_params() const;         // sum of n_elements
    uint64_t n_tensor_bytes() const;   // sum of n_bytes
    // 64-bit hash of all tensor bytes: recompute after inference to prove the
    // weights were not written.
    uint64_t tensor_data_checksum() const;

private:
    struct Mapping;
    GGUFFile() = default;
    void parse();
    // parse()'s steps, one for each part of the layout above, in file order.
    struct HeaderCounts {
        uint64_t n_tensors = 0;
        uint64_t n_kv = 0;
    };
    HeaderCounts read_header(gguf_detail::Cursor& c);
    void read_metadata(gguf_detail::Cursor& c, uint64_t n_kv);
    void read_alignment();  // general.alignment, which the tensor infos' offsets respect
    void read_tensor_infos(gguf_detail::Cursor& c, uint64_t n_tensors);
    void place_tensor_data(uint64_t end_of_infos);  // the padding, then the data section
    [[noreturn]] void fail_key(std::string_view key, const std::string& what) const;

    std::string name_;
    std::unique_ptr<Mapping> mapping_;  // owns the bytes (mmap or vector), or null for from_buffer
    const uint8_t* base_ = nullptr;
    size_t size_ = 0;
    uint32_t version_ = 0;
    uint32_t alignment_ = GGUF_DEFAULT_ALIGNMENT;
    uint64_t data_offset_ = 0;
    std::vector<GGUFKeyValue> kv_;
    std::vector<GGUFTensorInfo> tensors_;
    std::unordered_map<std::string, size_t, GGUFStringHash, std::equal_to<>> kv_index_;
    std::unordered_map<std::string, size_t, GGUFStringHash, std::equal_to<>> tensor_index_;
};

}  // namespace sixstep::llm
