// GGUF reader (layout: see gguf.h). The file is mapped read-only and checked
// completely before anything is handed out: every count, length, offset and
// shape is compared with the file's size before it is used, so a truncated or
// corrupted file gives one clear error and never a crash or a huge allocation.
#include "pipeline/llm/gguf/gguf.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/file.h"

namespace sixstep::llm {

// ---- GGUFValue ------------------------------------------------------------------

std::string_view gguf_type_name(GGUFValueType t) {
    switch (t) {
        case GGUFValueType::UINT8: return "u8";
        case GGUFValueType::INT8: return "i8";
        case GGUFValueType::UINT16: return "u16";
        case GGUFValueType::INT16: return "i16";
        case GGUFValueType::UINT32: return "u32";
        case GGUFValueType::INT32: return "i32";
        case GGUFValueType::FLOAT32: return "f32";
        case GGUFValueType::BOOL: return "bool";
        case GGUFValueType::STRING: return "str";
        case GGUFValueType::ARRAY: return "arr";
        case GGUFValueType::UINT64: return "u64";
        case GGUFValueType::INT64: return "i64";
        case GGUFValueType::FLOAT64: return "f64";
    }
    return "?";
}

namespace {

template <typename T>
GGUFArray make_array(GGUFValueType type, const std::vector<T>& xs) {
    GGUFArray a;
    a.type = type;
    a.items.reserve(xs.size());
    for (const auto& x : xs) a.items.emplace_back(T(x));
    return a;
}

std::string found_desc(const GGUFValue& v) {
    if (v.is_array()) return fmt::format("arr[{}]", gguf_type_name(v.as_array().type));
    return std::string(gguf_type_name(v.type()));
}

// Quoted, escaped, cut at max_chars (on a UTF-8 character boundary).
std::string quote(const std::string& s, size_t max_chars) {
    std::string out = "\"";
    size_t n = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if ((c & 0xc0) != 0x80) {  // a character starts here (not a UTF-8 continuation byte)
            if (n >= max_chars) {
                out += "…";
                break;
            }
            ++n;
        }
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            default:
                if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
                else out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

}  // namespace

GGUFValue::GGUFValue(const std::vector<std::string>& xs) : v_(make_array(GGUFValueType::STRING, xs)) {}
GGUFValue::GGUFValue(const std::vector<float>& xs) : v_(make_array(GGUFValueType::FLOAT32, xs)) {}
GGUFValue::GGUFValue(const std::vector<int32_t>& xs) : v_(make_array(GGUFValueType::INT32, xs)) {}
GGUFValue::GGUFValue(const std::vector<uint32_t>& xs) : v_(make_array(GGUFValueType::UINT32, xs)) {}
GGUFValue::GGUFValue(const std::vector<int64_t>& xs) : v_(make_array(GGUFValueType::INT64, xs)) {}
GGUFValue::GGUFValue(const std::vector<uint8_t>& xs) : v_(make_array(GGUFValueType::UINT8, xs)) {}
GGUFValue::GGUFValue(const std::vector<bool>& xs) {
    GGUFArray a;
    a.type = GGUFValueType::BOOL;
    for (bool b : xs) a.items.emplace_back(b);
    v_ = std::move(a);
}

GGUFValue GGUFValue::array(GGUFValueType type, std::vector<GGUFValue> items) {
    for (size_t i = 0; i < items.size(); ++i)
        if (items[i].type() != type)
            throw Error(fmt::format("array of {}: element {} is a {}", gguf_type_name(type), i,
                                    gguf_type_name(items[i].type())));
    return GGUFValue(GGUFArray{type, std::move(items)});
}

bool GGUFValue::is_integer() const {
    switch (type()) {
        case GGUFValueType::UINT8: case GGUFValueType::INT8: case GGUFValueType::UINT16:
        case GGUFValueType::INT16: case GGUFValueType::UINT32: case GGUFValueType::INT32:
        case GGUFValueType::UINT64: case GGUFValueType::INT64:
            return true;
        default:
            return false;
    }
}

bool GGUFValue::is_float() const {
    return type() == GGUFValueType::FLOAT32 || type() == GGUFValueType::FLOAT64;
}

int64_t GGUFValue::as_i64() const {
    if (const auto* u = std::get_if<uint64_t>(&v_)) {
        if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            throw Error(fmt::format("value {} does not fit in int64", *u));
        return static_cast<int64_t>(*u);
    }
    return std::visit(
        [&](const auto& x) -> int64_t {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<int64_t>(x);
            else throw Error(fmt::format("expected an integer, found {}", found_desc(*this)));
        },
        v_);
}

uint64_t GGUFValue::as_u64() const {
    if (const auto* u = std::get_if<uint64_t>(&v_)) return *u;
    const int64_t x = as_i64();
    if (x < 0) throw Error(fmt::format("expected a non-negative integer, found {}", x));
    return static_cast<uint64_t>(x);
}

uint32_t GGUFValue::as_u32() const {
    const uint64_t x = as_u64();
    if (x > std::numeric_limits<uint32_t>::max()) throw Error(fmt::format("value {} does not fit in uint32", x));
    return static_cast<uint32_t>(x);
}

int32_t GGUFValue::as_i32() const {
    const int64_t x = as_i64();
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
        throw Error(fmt::format("value {} does not fit in int32", x));
    return static_cast<int32_t>(x);
}

double GGUFValue::as_f64() const {
    if (const auto* f = std::get_if<float>(&v_)) return *f;
    if (const auto* d = std::get_if<double>(&v_)) return *d;
    throw Error(fmt::format("expected a float, found {}", found_desc(*this)));
}

float GGUFValue::as_f32() const { return static_cast<float>(as_f64()); }

bool GGUFValue::as_bool() const {
    if (const auto* b = std::get_if<bool>(&v_)) return *b;
    throw Error(fmt::format("expected a bool, found {}", found_desc(*this)));
}

const std::string& GGUFValue::as_string() const {
    if (const auto* s = std::get_if<std::string>(&v_)) return *s;
    throw Error(fmt::format("expected a string, found {}", found_desc(*this)));
}

const GGUFArray& GGUFValue::as_array() const {
    if (const auto* a = std::get_if<GGUFArray>(&v_)) return *a;
    throw Error(fmt::format("expected an array, found {}", found_desc(*this)));
}

namespace {
template <typename T, typename F>
std::vector<T> convert_items(const GGUFValue& v, F&& conv) {
    const auto& a = v.as_array();
    std::vector<T> out;
    out.reserve(a.items.size());
    for (size_t i = 0; i < a.items.size(); ++i) {
        try {
            out.push_back(conv(a.items[i]));
        } catch (const Error& e) {
            throw Error(fmt::format("element {}: {}", i, e.message()));
        }
    }
    return out;
}
}  // namespace

std::vector<std::string> GGUFValue::to_strings() const {
    return convert_items<std::string>(*this, [](const GGUFValue& x) { return x.as_string(); });
}
std::vector<float> GGUFValue::to_f32s() const {
    return convert_items<float>(*this, [](const GGUFValue& x) { return x.as_f32(); });
}
std::vector<int32_t> GGUFValue::to_i32s() const {
    return convert_items<int32_t>(*this, [](const GGUFValue& x) { return x.as_i32(); });
}
std::vector<int64_t> GGUFValue::to_i64s() const {
    return convert_items<int64_t>(*this, [](const GGUFValue& x) { return x.as_i64(); });
}

std::string GGUFValue::to_display(size_t max_items, size_t max_chars) const {
    return std::visit(
        [&](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return quote(x, max_chars);
            } else if constexpr (std::is_same_v<T, GGUFArray>) {
                std::string s = fmt::format("[{} × {}", gguf_type_name(x.type), x.items.size());
                for (size_t i = 0; i < x.items.size() && i < max_items; ++i)
                    s += (i == 0 ? ": " : ", ") + x.items[i].to_display(max_items, max_chars);
                if (x.items.size() > max_items) s += ", ...";
                return s + "]";
            } else if constexpr (std::is_same_v<T, bool>) {
                return x ? "true" : "false";
            } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
                return std::to_string(static_cast<int>(x));
            } else {
                return fmt::format("{}", x);
            }
        },
        v_);
}

bool GGUFArray::operator==(const GGUFArray& o) const { return type == o.type && items == o.items; }

bool GGUFValue::operator==(const GGUFValue& o) const { return v_ == o.v_; }

// ---- GGUFTensorInfo ---------------------------------------------------------------

std::string GGUFTensorInfo::shape_str() const {
    std::string s = "[";
    for (uint32_t i = 0; i < n_dims; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

void GGUFTensorInfo::require_supported() const { ggml_require_supported(type, "tensor " + name); }

std::vector<float> GGUFTensorInfo::to_f32() const {
    if (type != GGMLType::BF16) require_supported();
    return dequantize(type, data, n_elements());
}

// ---- the byte source ----------------------------------------------------------------

struct GGUFFile::Mapping {
    void* addr = nullptr;  // mmap'ed region (read-only), or null
    size_t length = 0;
    std::vector<uint8_t> bytes;  // owned copy (from_bytes)

    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping() {
        if (addr) ::munmap(addr, length);
    }
};

GGUFFile::GGUFFile(GGUFFile&&) noexcept = default;
GGUFFile& GGUFFile::operator=(GGUFFile&&) noexcept = default;
GGUFFile::~GGUFFile() = default;

GGUFFile GGUFFile::open(const std::filesystem::path& path) {
    GGUFFile f;
    f.name_ = path.string();
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw Error(fmt::format("cannot open {}: {}", f.name_, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const std::string kind = describe_file_type(st.st_mode);
        ::close(fd);
        throw Error(fmt::format("cannot open {}: it is {}, not a regular file", f.name_, kind));
    }
    f.mapping_ = std::make_unique<Mapping>();
    f.size_ = static_cast<size_t>(st.st_size);
    if (f.size_ > 0) {
        // PROT_READ: the weights can never be written through this mapping.
        void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw Error(fmt::format("cannot map {}: {}", f.name_, std::strerror(err)));
        }
        f.mapping_->addr = p;
        f.mapping_->length = f.size_;
        f.base_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);  // the mapping stays valid after close
    f.parse();
    return f;
}

GGUFFile GGUFFile::from_buffer(const void* data, size_t size, std::string name) {
    GGUFFile f;
    f.name_ = std::move(name);
    f.base_ = static_cast<const uint8_t*>(data);
    f.size_ = size;
    f.parse();
    return f;
}

GGUFFile GGUFFile::from_bytes(std::vector<uint8_t> bytes, std::string name) {
    GGUFFile f;
    f.name_ = std::move(name);
    f.mapping_ = std::make_unique<Mapping>();
    f.mapping_->bytes = std::move(bytes);
    f.base_ = f.mapping_->bytes.data();
    f.size_ = f.mapping_->bytes.size();
    f.parse();
    return f;
}

// ---- parsing ---------------------------------------------------------------------------

// Reads little-endian values from [base, base+size) with bounds checks. All
// messages carry the byte offset; the file name is added by parse().
class gguf_detail::Cursor {
public:
    Cursor(const uint8_t* base, size_t size) : base_(base), size_(size) {}

    size_t pos() const { return pos_; }
    size_t remaining() const { return size_ - pos_; }

    void need(size_t n, std::string_view what) const {
        if (n > remaining())
            throw Error(fmt::format("unexpected end of file at byte {} reading {} (needs {} bytes, {} left)", pos_,
                                    what, n, remaining()));
    }

    template <typename T>
    T read(std::string_view what) {
        need(sizeof(T), what);
        T x;
        std::memcpy(&x, base_ + pos_, sizeof(T));  // the host is little-endian (x86-64, arm64)
        pos_ += sizeof(T);
        return x;
    }

    std::string read_string(std::string_view what) {
        const size_t at = pos_;
        const uint64_t len = read<uint64_t>(what);
        if (len > remaining())
            throw Error(fmt::format("{} at byte {} has length {}, beyond the end of the file ({} bytes left)", what,
                                    at, len, remaining()));
        std::string s(reinterpret_cast<const char*>(base_ + pos_), static_cast<size_t>(len));
        pos_ += static_cast<size_t>(len);
        return s;
    }

private:
    const uint8_t* base_;
    size_t size_;
    size_t pos_ = 0;
};

namespace {

using gguf_detail::Cursor;

constexpr uint32_t kMaxArrayDepth = 8;  // real files nest at most once; bounds recursion

// The address alignment a tensor's data needs to be read in place as its
// type: a plain type's size, a Q8_0/Q4_0 block's fp16 scale. A file with
// general.alignment = 1 may place an F32 tensor at an odd byte; reading it
// through a float* is undefined behaviour even where the CPU forgives it.
// Types sixstep cannot compute with are never read, so they need nothing.
size_t data_alignment(GGMLType type) {
    const GGMLTypeTraits& t = ggml_traits(type);
    if (!t.supported) return 1;
    if (!t.quantized) return t.type_size;
    if (type == GGMLType::Q4_0) return alignof(block_q4_0);
    return alignof(block_q8_0);  // Q8_0, the only other supported block type
}

// Smallest number of bytes one value of this type takes on disk; used to
// reject absurd counts before allocating for them.
size_t min_value_size(GGUFValueType t) {
    switch (t) {
        case GGUFValueType::UINT8: case GGUFValueType::INT8: case GGUFValueType::BOOL: return 1;
        case GGUFValueType::UINT16: case GGUFValueType::INT16: return 2;
        case GGUFValueType::UINT32: case GGUFValueType::INT32: case GGUFValueType::FLOAT32: return 4;
        case GGUFValueType::UINT64: case GGUFValueType::INT64: case GGUFValueType::FLOAT64: return 8;
        case GGUFValueType::STRING: return 8;
        case GGUFValueType::ARRAY: return 12;
    }
    return 1;
}

bool valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GGUFValueType::FLOAT64); }

// Memory the decoded metadata may take. Each value is a GGUFValue in memory
// (~40 bytes) however small on disk, so a file of one long u8 array would
// need 40 times its size; real metadata (a 256K-token vocabulary) takes a few
// tens of MiB. The allowance grows with the file, but only twice as fast.
struct MetadataBudget {
    uint64_t left;
    uint64_t limit;
    explicit MetadataBudget(uint64_t file_size) : left(64ull * 1024 * 1024 + 2 * file_size), limit(left) {}
    // n_items: of the array at byte `at`, or 0 for a string.
    void take(uint64_t bytes, size_t at, uint64_t n_items) {
        if (bytes <= left) {
            left -= bytes;
            return;
        }
        const std::string what = n_items ? fmt::format("array of {} values", n_items) : std::string("string");
        throw Error(fmt::format("{} at byte {} would take {:.0f} MiB of memory, over the {:.0f} MiB that metadata "
                                "may use in a file of this size (64 MiB + 2 × its size)",
                                what, at, static_cast<double>(bytes) / (1 << 20), static_cast<double>(limit) / (1 << 20)));
    }
};

GGUFValue read_value(Cursor& c, GGUFValueType type, uint32_t depth, MetadataBudget& budget) {
    switch (type) {
        case GGUFValueType::UINT8: return GGUFValue(c.read<uint8_t>("a u8 value"));
        case GGUFValueType::INT8: return GGUFValue(c.read<int8_t>("an i8 value"));
        case GGUFValueType::UINT16: return GGUFValue(c.read<uint16_t>("a u16 value"));
        case GGUFValueType::INT16: return GGUFValue(c.read<int16_t>("an i16 value"));
        case GGUFValueType::UINT32: return GGUFValue(c.read<uint32_t>("a u32 value"));
        case GGUFValueType::INT32: return GGUFValue(c.read<int32_t>("an i32 value"));
        case GGUFValueType::FLOAT32: return GGUFValue(c.read<float>("an f32 value"));
        case GGUFValueType::UINT64: return GGUFValue(c.read<uint64_t>("a u64 value"));
        case GGUFValueType::INT64: return GGUFValue(c.read<int64_t>("an i64 value"));
        case GGUFValueType::FLOAT64: return GGUFValue(c.read<double>("an f64 value"));
        case GGUFValueType::BOOL: {
            const size_t at = c.pos();
            const uint8_t b = c.read<uint8_t>("a bool value");
            if (b > 1) throw Error(fmt::format("bool value at byte {} is {}, not 0 or 1", at, b));
            return GGUFValue(b == 1);
        }
        case GGUFValueType::STRING: {
            const size_t at = c.pos();
            std::string str = c.read_string("a string value");
            if (str.size() > 15) budget.take(str.size(), at, 0);  // longer than the inline (SSO) buffer
            return GGUFValue(std::move(str));
        }
        case GGUFValueType::ARRAY: {
            const size_t at = c.pos();
            if (depth >= kMaxArrayDepth)
                throw Error(fmt::format("array at byte {} is nested more than {} deep", at, kMaxArrayDepth));
            const uint32_t et = c.read<uint32_t>("an array's element type");
            if (!valid_value_type(et))
                throw Error(fmt::format("array at byte {} has unknown element type {}", at, et));
            const auto etype = static_cast<GGUFValueType>(et);
            const uint64_t n = c.read<uint64_t>("an array's length");
            if (n > c.remaining() / min_value_size(etype))
                throw Error(fmt::format("array at byte {} claims {} elements of type {}: more than the {} bytes left "
                                        "in the file can hold",
                                        at, n, gguf_type_name(etype), c.remaining()));
            budget.take(n * sizeof(GGUFValue), at, n);
            GGUFArray a;
            a.type = etype;
            a.items.reserve(static_cast<size_t>(n));
            for (uint64_t i = 0; i < n; ++i) a.items.push_back(read_value(c, etype, depth + 1, budget));
            return GGUFValue(std::move(a));
        }
    }
    throw Error("unreachable: bad value type");
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t& out) { return __builtin_mul_overflow(a, b, &out); }

}  // namespace

// The file, part by part in the order of the layout in gguf.h. Each step
// checks what it reads before the next one relies on it; every message
// gets the file's name here.
void GGUFFile::parse() {
    try {
        Cursor c(base_, size_);
        const HeaderCounts n = read_header(c);
        read_metadata(c, n.n_kv);
        read_alignment();  // from the metadata; the tensor infos' offsets must respect it
        read_tensor_infos(c, n.n_tensors);
        place_tensor_data(c.pos());  // the padding to the alignment, then the data section
    } catch (const Error& e) {
        throw Error(fmt::format("{}: {}", name_, e.message()));
    }
}

// ---- the header: magic, version, counts ---------------------------------------------------

namespace {

void check_gguf_magic(const uint8_t* base, size_t size) {
    if (size < 4) throw Error(fmt::format("not a GGUF file: it is only {} bytes long", size));
    if (std::memcmp(base, "GGUF", 4) == 0) return;
    std::string got;
    for (int i = 0; i < 4; ++i) {
        const unsigned char ch = base[i];
        got += (ch >= 0x20 && ch < 0x7f) ? std::string(1, static_cast<char>(ch)) : fmt::format("\\x{:02x}", ch);
    }
    throw Error(fmt::format("not a GGUF file: bad magic \"{}\" at byte 0 (expected \"GGUF\")", got));
}

void check_gguf_version(uint32_t version) {
    if (version == 2 || version == 3) return;
    std::string hint;
    if (version == 1) hint = " (version 1 is an obsolete format; convert the file again)";
    else if ((version & 0xffff) == 0 && version != 0) hint = " (a big-endian file?)";
    throw Error(fmt::format("unsupported GGUF version {} at byte 4 (sixstep reads versions 2 and 3){}", version,
                            hint));
}

}  // namespace

// The counts are compared with what the rest of the file could hold before
// anything is reserved for them.
GGUFFile::HeaderCounts GGUFFile::read_header(Cursor& c) {
    check_gguf_magic(base_, size_);
    c.read<uint32_t>("the magic");
    version_ = c.read<uint32_t>("the version");
    check_gguf_version(version_);
    HeaderCounts n;
    n.n_tensors = c.read<uint64_t>("the tensor count");
    n.n_kv = c.read<uint64_t>("the metadata count");
    // A metadata entry takes at least 13 bytes (key length, type, one byte);
    // a tensor info at least 32 (name length, n_dims, one dim, type, offset).
    if (n.n_kv > c.remaining() / 13)
        throw Error(fmt::format("header at byte 16 claims {} metadata entries: impossible in a file of {} bytes",
                                n.n_kv, size_));
    if (n.n_tensors > c.remaining() / 32)
        throw Error(fmt::format("header at byte 8 claims {} tensors: impossible in a file of {} bytes", n.n_tensors,
                                size_));
    return n;
}

// ---- the metadata: key, value type, value ---------------------------------------------------

namespace {

// An entry's value: its u32 type, then a value of that type.
GGUFValue read_typed_value(Cursor& c, MetadataBudget& budget) {
    const size_t type_at = c.pos();
    const uint32_t t = c.read<uint32_t>("its value type");
    if (!valid_value_type(t)) throw Error(fmt::format("unknown value type {} at byte {}", t, type_at));
    return read_value(c, static_cast<GGUFValueType>(t), 0, budget);
}

}  // namespace

void GGUFFile::read_metadata(Cursor& c, uint64_t n_kv) {
    MetadataBudget budget(size_);
    kv_.reserve(static_cast<size_t>(n_kv));
    for (uint64_t i = 0; i < n_kv; ++i) {
        const size_t at = c.pos();
        std::string key = c.read_string(fmt::format("the key of metadata entry {}", i));
        try {
            GGUFValue v = read_typed_value(c, budget);
            if (kv_index_.count(key)) throw Error(fmt::format("duplicate key at byte {}", at));
            kv_index_.emplace(key, kv_.size());
            kv_.push_back({std::move(key), std::move(v)});
        } catch (const Error& e) {
            throw Error(fmt::format("metadata key {}: {}", key, e.message()));
        }
    }
}

// general.alignment, when present: a u32 power of two (else the default, 32).
void GGUFFile::read_alignment() {
    const GGUFValue* a = find("general.alignment");
    if (!a) return;
    if (a->type() != GGUFValueType::UINT32)
        throw Error(fmt::format("general.alignment must be a u32, found {}", found_desc(*a)));
    const uint32_t al = a->as_u32();
    if (al == 0 || (al & (al - 1)) != 0) throw Error(fmt::format("general.alignment = {} is not a power of two", al));
    alignment_ = al;
}

// ---- the tensor infos: name, shape, type, offset --------------------------------------------

namespace {

// n_dims, then the n_dims dimensions: each at least 1, their product within int64.
void read_tensor_shape(Cursor& c, GGUFTensorInfo& t) {
    const size_t dims_at = c.pos();
    t.n_dims = c.read<uint32_t>("n_dims");
    if (t.n_dims < 1 || t.n_dims > 4)
        throw Error(fmt::format("n_dims = {} at byte {} (must be 1 to 4)", t.n_dims, dims_at));
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
        const size_t ne_at = c.pos();
        const uint64_t ne = c.read<uint64_t>("a dimension");
        if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            throw Error(fmt::format("ne[{}] = {} at byte {} is not a valid dimension", d, ne, ne_at));
        if (mul_overflows(n_elements, ne, n_elements) ||
            n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            throw Error(fmt::format("shape overflows: the element count does not fit in 64 bits (at byte {})", ne_at));
        t.ne[d] = static_cast<int64_t>(ne);
    }
}

// The ggml type, and with the shape the tensor's size in bytes.
void read_tensor_type(Cursor& c, GGUFTensorInfo& t) {
    const size_t type_at = c.pos();
    const uint32_t type_id = c.read<uint32_t>("the tensor type");
    const GGMLTypeTraits* traits = ggml_type_traits(type_id);
    if (!traits) throw Error(fmt::format("unknown ggml type id {} at byte {}", type_id, type_at));
    t.type = traits->type;
    if (t.ne[0] % traits->block_size != 0)
        throw Error(fmt::format("ne[0] = {} is not a multiple of the {} block size {}", t.ne[0], traits->name,
                                traits->block_size));
    // bytes = (ne0 / block) * type_size * ne1 * ne2 * ne3, without overflow
    uint64_t bytes = static_cast<uint64_t>(t.ne[0] / traits->block_size);
    bool overflow = mul_overflows(bytes, traits->type_size, bytes);
    for (int d = 1; d < 4; ++d) overflow = overflow || mul_overflows(bytes, t.ne[d], bytes);
    if (overflow) throw Error("byte size overflows 64 bits");
    t.n_bytes = bytes;
}

// Where the data starts, counted from the data section: a multiple of the alignment.
void read_tensor_offset(Cursor& c, GGUFTensorInfo& t, uint32_t alignment) {
    const size_t off_at = c.pos();
    t.offset = c.read<uint64_t>("the data offset");
    if (t.offset % alignment != 0)
        throw Error(fmt::format("data offset {} at byte {} is not a multiple of the alignment {}", t.offset, off_at,
                                alignment));
}

}  // namespace

void GGUFFile::read_tensor_infos(Cursor& c, uint64_t n_tensors) {
    tensors_.reserve(static_cast<size_t>(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        const size_t at = c.pos();
        GGUFTensorInfo t;
        t.name = c.read_string(fmt::format("the name of tensor {}", i));
        try {
            if (t.name.empty()) throw Error(fmt::format("empty name at byte {}", at));
            read_tensor_shape(c, t);
            read_tensor_type(c, t);
            read_tensor_offset(c, t, alignment_);
            if (tensor_index_.count(t.name)) throw Error(fmt::format("duplicate tensor name at byte {}", at));
        } catch (const Error& e) {
            throw Error(fmt::format("tensor {}: {}", t.name, e.message()));
        }
        tensor_index_.emplace(t.name, tensors_.size());
        tensors_.push_back(std::move(t));
    }
}

// ---- the padding and the tensor data ----------------------------------------------------------

namespace {

// Sorted by offset, each tensor's bytes must end before the next one's begin.
void check_no_overlaps(const std::vector<GGUFTensorInfo>& tensors) {
    std::vector<const GGUFTensorInfo*> by_offset;
    by_offset.reserve(tensors.size());
    for (const auto& t : tensors) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
        const auto* a = by_offset[i - 1];
        const auto* b = by_offset[i];
        if (a->offset + a->n_bytes > b->offset)
            throw Error(fmt::format("tensors {} and {} overlap: data offsets [{}, {}) and [{}, {})", a->name, b->name,
                                    a->offset, a->offset + a->n_bytes, b->offset, b->offset + b->n_bytes));
    }
}

}  // namespace

// The data section starts at the first multiple of the alignment after the
// tensor infos. Each tensor's bytes must lie inside the file, aligned in
// memory as its type needs, and overlap no other tensor's.
void GGUFFile::place_tensor_data(uint64_t end_of_infos) {
    data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
    for (auto& t : tensors_) {
        const uint64_t begin = data_offset_ + t.offset;
        uint64_t end = 0;
        if (begin < t.offset || __builtin_add_overflow(begin, t.n_bytes, &end) || end > size_)
            throw Error(fmt::format("tensor {}: data [{}, {}) is beyond the end of the file (size {})", t.name, begin,
                                    begin + t.n_bytes, size_));
        t.data = base_ + begin;
        const size_t need = data_alignment(t.type);
        if (reinterpret_cast<uintptr_t>(t.data) % need != 0)
            throw Error(fmt::format("tensor {}: {} data at byte {} is not aligned to {} bytes (general.alignment = {})",
                                    t.name, ggml_type_name(t.type), begin, need, alignment_));
    }
    check_no_overlaps(tensors_);
}

// ---- metadata access --------------------------------------------------------------------

const GGUFValue* GGUFFile::find(std::string_view key) const {
    auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

void GGUFFile::fail_key(std::string_view key, const std::string& what) const {
    throw Error(fmt::format("{}: key {}: {}", name_, key, what));
}

const GGUFValue& GGUFFile::get(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) fail_key(key, "missing");
    return *v;
}

namespace {
template <typename T, typename F>
T convert_key(const GGUFFile& f, std::string_view key, const GGUFValue& v, F&& conv) {
    try {
        return conv(v);
    } catch (const Error& e) {
        throw Error(fmt::format("{}: key {}: {}", f.name(), key, e.message()));
    }
}
}  // namespace

#define SIXSTEP_GGUF_GETTER(RET, NAME, EXPR)                                                              \
    RET GGUFFile::NAME(std::string_view key) const {                                                     \
        return convert_key<RET>(*this, key, get(key), [](const GGUFValue& v) -> RET { return EXPR; });  \
    }

SIXSTEP_GGUF_GETTER(uint32_t, get_u32, v.as_u32())
SIXSTEP_GGUF_GETTER(int32_t, get_i32, v.as_i32())
SIXSTEP_GGUF_GETTER(uint64_t, get_u64, v.as_u64())
SIXSTEP_GGUF_GETTER(float, get_f32, v.as_f32())
SIXSTEP_GGUF_GETTER(bool, get_bool, v.as_bool())
SIXSTEP_GGUF_GETTER(std::string, get_str, v.as_string())
SIXSTEP_GGUF_GETTER(std::vector<std::string>, get_arr_str, v.to_strings())
SIXSTEP_GGUF_GETTER(std::vector<float>, get_arr_f32, v.to_f32s())
SIXSTEP_GGUF_GETTER(std::vector<int32_t>, get_arr_i32, v.to_i32s())
#undef SIXSTEP_GGUF_GETTER

uint32_t GGUFFile::get_u32(std::string_view key, uint32_t fallback) const {
    return has(key) ? get_u32(key) : fallback;
}
int32_t GGUFFile::get_i32(std::string_view key, int32_t fallback) const {
    return has(key) ? get_i32(key) : fallback;
}
uint64_t GGUFFile::get_u64(std::string_view key, uint64_t fallback) const {
    return has(key) ? get_u64(key) : fallback;
}
float GGUFFile::get_f32(std::string_view key, float fallback) const { return has(key) ? get_f32(key) : fallback; }
bool GGUFFile::get_bool(std::string_view key, bool fallback) const { return has(key) ? get_bool(key) : fallback; }
std::string GGUFFile::get_str(std::string_view key, std::string_view fallback) const {
    return has(key) ? get_str(key) : std::string(fallback);
}
std::optional<uint32_t> GGUFFile::find_u32(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return get_u32(key);
}

std::string GGUFFile::architecture() const { return get_str("general.architecture", ""); }

// ---- tensors ----------------------------------------------------------------------------------

const GGUFTensorInfo* GGUFFile::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GGUFTensorInfo& GGUFFile::tensor(std::string_view name) const {
    const GGUFTensorInfo* t = find_tensor(name);
    if (!t) throw Error(fmt::format("{}: no tensor named {}", name_, name));
    return *t;
}

uint64_t GGUFFile::n_params() const {
    uint64_t n = 0;
    for (const auto& t : tensors_) n += static_cast<uint64_t>(t.n_elements());
    return n;
}

uint64_t GGUFFile::n_tensor_bytes() const {
    uint64_t n = 0;
    for (const auto& t : tensors_) n += t.n_bytes;
    return n;
}

uint64_t GGUFFile::tensor_data_checksum() const {
    // Word-at-a-time multiply-xorshift: fast (memory bound) and sensitive to
    // any changed byte. Not cryptographic; it only has to notice accidents.
    uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&](uint64_t w) {
        h ^= w;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    };
    for (const auto& t : tensors_) {
        const uint8_t* p = t.data;
        uint64_t n = t.n_bytes;
        mix(n);
        for (; n >= 8; n -= 8, p += 8) {
            uint64_t w;
            std::memcpy(&w, p, 8);
            mix(w);
        }
        uint64_t tail = 0;
        std::memcpy(&tail, p, static_cast<size_t>(n));
        mix(tail);
    }
    return h;
}

}  // namespace sixstep::llm
