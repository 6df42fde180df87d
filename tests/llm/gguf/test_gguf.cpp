// GGUF reader and writer: round trips of every value type and tensor type,
// typed getters, and one clear error for each kind of broken file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/gguf/gguf.h"
#include "pipeline/llm/gguf/gguf_writer.h"

using namespace sixstep::llm;
namespace fs = std::filesystem;

namespace {

// A small model-like file: a few keys and two tensors.
GGUFWriter small_writer() {
    GGUFWriter w;
    w.set("general.architecture", "llama");
    w.set("llama.block_count", uint32_t(2));
    w.set("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "c"});
    std::vector<float> emb(64 * 3), norm(64);
    for (size_t i = 0; i < emb.size(); ++i) emb[i] = static_cast<float>(i % 7) - 3.0f;
    for (size_t i = 0; i < norm.size(); ++i) norm[i] = 1.0f + static_cast<float>(i) / 64;
    w.add_tensor("token_embd.weight", GGMLType::Q8_0, {64, 3}, emb);
    w.add_tensor("output_norm.weight", GGMLType::F32, {64}, norm);
    return w;
}

// Byte position of the first occurrence of `s` in `bytes`.
size_t find_bytes(const std::vector<uint8_t>& bytes, std::string_view s) {
    auto it = std::search(bytes.begin(), bytes.end(), s.begin(), s.end());
    REQUIRE(it != bytes.end());
    return static_cast<size_t>(it - bytes.begin());
}

template <typename T>
void poke(std::vector<uint8_t>& bytes, size_t at, T value) {
    REQUIRE(at + sizeof(T) <= bytes.size());
    std::memcpy(bytes.data() + at, &value, sizeof(T));
}

// Where the tensor info of `name` starts its fields (just after the name).
size_t tensor_fields(const std::vector<uint8_t>& bytes, std::string_view name) {
    // the name is stored after its u64 length; search for length+name to avoid
    // matching the same text inside metadata
    std::string needle(8, '\0');
    const uint64_t len = name.size();
    std::memcpy(needle.data(), &len, 8);
    needle += name;
    return find_bytes(bytes, needle) + needle.size();
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
    try {
        GGUFFile::from_buffer(bytes.data(), bytes.size(), "bad.gguf");
    } catch (const sixstep::Error& e) {
        return e.what();
    }
    return "(no error)";
}

// doctest's Contains matcher compares with doctest::String.
doctest::String dstr(const std::string& s) { return doctest::String(s.c_str()); }
doctest::Contains contains(const std::string& s) { return doctest::Contains(dstr(s)); }

struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("sixstep-gguf-" + std::to_string(std::random_device{}()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

TEST_CASE("GGUF round trip: every metadata value type, nested arrays") {
    GGUFWriter w;
    w.set("t.u8", uint8_t(200));
    w.set("t.i8", int8_t(-100));
    w.set("t.u16", uint16_t(60000));
    w.set("t.i16", int16_t(-30000));
    w.set("t.u32", uint32_t(4000000000u));
    w.set("t.i32", int32_t(-2000000000));
    w.set("t.f32", 0.25f);
    w.set("t.bool", true);
    w.set("t.str", "héllo\nworld");
    w.set("t.u64", uint64_t(1) << 60);
    w.set("t.i64", int64_t(-(int64_t(1) << 60)));
    w.set("t.f64", 1e300);
    w.set("t.arr.f32", std::vector<float>{1.5f, -2.5f});
    w.set("t.arr.empty", std::vector<std::string>{});
    w.set("t.arr.nested", GGUFValue::array(GGUFValueType::ARRAY, {GGUFValue(std::vector<int32_t>{1, 2}),
                                                                 GGUFValue(std::vector<int32_t>{3})}));
    CHECK(GGUFValue(1LL).type() == GGUFValueType::INT64);
    CHECK(GGUFValue(1ULL).type() == GGUFValueType::UINT64);
    CHECK(GGUFValue(size_t(1)).type() == GGUFValueType::UINT64);
    CHECK(GGUFValue(7).type() == GGUFValueType::INT32);
    const auto bytes = w.to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size());

    CHECK(f.version() == 3);
    CHECK(f.metadata().size() == 15);
    CHECK(f.metadata()[0].key == "t.u8");  // file order kept
    CHECK(f.get("t.u8").type() == GGUFValueType::UINT8);
    CHECK(f.get_u32("t.u8") == 200);
    CHECK(f.get_i32("t.i8") == -100);
    CHECK(f.get_u32("t.u16") == 60000);
    CHECK(f.get_i32("t.i16") == -30000);
    CHECK(f.get_u32("t.u32") == 4000000000u);
    CHECK(f.get_i32("t.i32") == -2000000000);
    CHECK(f.get_f32("t.f32") == 0.25f);
    CHECK(f.get_bool("t.bool"));
    CHECK(f.get_str("t.str") == "héllo\nworld");
    CHECK(f.get_u64("t.u64") == (uint64_t(1) << 60));
    CHECK(f.get("t.i64").as_i64() == -(int64_t(1) << 60));
    CHECK(f.get("t.f64").as_f64() == 1e300);
    CHECK(f.get_arr_f32("t.arr.f32") == std::vector<float>{1.5f, -2.5f});
    CHECK(f.get_arr_str("t.arr.empty").empty());
    const GGUFValue& nested = f.get("t.arr.nested");
    REQUIRE(nested.size() == 2);
    CHECK(nested.as_array().type == GGUFValueType::ARRAY);
    CHECK(nested[0].to_i32s() == std::vector<int32_t>{1, 2});
    CHECK(nested[1].to_i32s() == std::vector<int32_t>{3});

    // every value compares equal to what was written
    GGUFWriter w2;
    for (const auto& kv : f.metadata()) w2.set(kv.key, kv.value);
    CHECK(w2.to_bytes() == bytes);
}

TEST_CASE("GGUF typed getters: fallbacks, optional variants, clear type errors") {
    const auto bytes = small_writer().to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size(), "small.gguf");
    CHECK(f.architecture() == "llama");
    CHECK(f.get_u32("llama.block_count") == 2);
    CHECK(f.get_u32("llama.context_length", 2048) == 2048);
    CHECK(f.get_f32("llama.rope.freq_base", 10000.0f) == 10000.0f);
    CHECK_FALSE(f.find_u32("llama.embedding_length").has_value());
    CHECK(f.architecture() == "llama");
    CHECK(f.get_arr_str("tokenizer.ggml.tokens") == std::vector<std::string>{"a", "b", "c"});

    CHECK_THROWS_WITH_AS(f.get_u32("llama.embedding_length"), "small.gguf: key llama.embedding_length: missing",
                         sixstep::Error);
    CHECK_THROWS_WITH_AS(f.get_u32("general.architecture"),
                         "small.gguf: key general.architecture: expected an integer, found str", sixstep::Error);
    // a present key of the wrong type is an error even with a fallback
    CHECK_THROWS_WITH_AS(f.get_f32("llama.block_count", 1.0f),
                         "small.gguf: key llama.block_count: expected a float, found u32", sixstep::Error);
    CHECK_THROWS_WITH_AS(f.get_arr_f32("tokenizer.ggml.tokens"),
                         "small.gguf: key tokenizer.ggml.tokens: element 0: expected a float, found str",
                         sixstep::Error);
    CHECK(f.get("tokenizer.ggml.tokens").to_display(2) == "[str × 3: \"a\", \"b\", ...]");
}

TEST_CASE("GGUF integer getters convert between widths only when the value fits") {
    GGUFWriter w;
    w.set("neg", int32_t(-1));
    w.set("big", uint64_t(1) << 40);
    w.set("ok", int64_t(7));
    const auto bytes = w.to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size(), "m.gguf");
    CHECK(f.get_u32("ok") == 7);
    CHECK_THROWS_WITH_AS(f.get_u32("neg"), "m.gguf: key neg: expected a non-negative integer, found -1",
                         sixstep::Error);
    CHECK_THROWS_WITH_AS(f.get_u32("big"), "m.gguf: key big: value 1099511627776 does not fit in uint32",
                         sixstep::Error);
}

TEST_CASE("GGUF tensors: shapes, offsets, alignment and data for F32, F16, Q8_0, Q4_0") {
    std::vector<float> x(64 * 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    GGUFWriter w;
    w.set_alignment(64);
    w.set("general.architecture", "llama");
    w.add_tensor("f32", GGMLType::F32, {64, 4}, x);
    w.add_tensor("f16", GGMLType::F16, {64, 2, 2}, x);
    w.add_tensor("q8", GGMLType::Q8_0, {64, 4}, x);
    w.add_tensor("q4", GGMLType::Q4_0, {32, 2, 2, 2}, x);
    TempDir dir;
    const fs::path path = dir.path / "t.gguf";
    w.write(path);

    const auto f = GGUFFile::open(path);
    CHECK(f.alignment() == 64);
    CHECK(f.data_offset() % 64 == 0);
    REQUIRE(f.tensors().size() == 4);
    CHECK(f.tensors()[0].name == "f32");  // file order
    for (const auto& t : f.tensors()) {
        CAPTURE(t.name);
        CHECK(t.offset % 64 == 0);
        CHECK(reinterpret_cast<uintptr_t>(t.data) % 64 == 0);  // mmap is page aligned
        CHECK(t.n_elements() == 256);
        const auto y = t.to_f32();
        const float tol = t.type == GGMLType::F32 ? 0.0f : t.type == GGMLType::Q4_0 ? 0.15f : 0.01f;
        for (size_t i = 0; i < y.size(); ++i) REQUIRE(std::fabs(y[i] - x[i]) <= tol);
    }
    const auto& q4 = f.tensor("q4");
    CHECK(q4.type == GGMLType::Q4_0);
    CHECK(q4.n_dims == 4);
    CHECK(q4.shape_str() == "[32, 2, 2, 2]");
    CHECK(q4.n_bytes == 8 * 18);
    CHECK(q4.row_bytes() == 18);
    CHECK(q4.n_rows() == 8);
    CHECK(f.tensor("f16").shape() == std::vector<int64_t>{64, 2, 2});
    CHECK(f.tensor("f16").ne[3] == 1);
    CHECK(f.n_params() == 4 * 256);
    CHECK(f.n_tensor_bytes() == 1024 + 512 + 8 * 34 + 8 * 18);
    CHECK(f.find_tensor("nope") == nullptr);
    CHECK_THROWS_WITH_AS(f.tensor("nope"), (path.string() + ": no tensor named nope").c_str(), sixstep::Error);

    // the same bytes through memory give the same checksum; a changed byte changes it
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto g = GGUFFile::from_bytes(bytes);
    CHECK(g.tensor_data_checksum() == f.tensor_data_checksum());
    bytes.back() ^= 1;
    const auto h = GGUFFile::from_bytes(bytes);
    CHECK(h.tensor_data_checksum() != f.tensor_data_checksum());
}

TEST_CASE("GGUF writer: a file without tensors has no data section, whatever the alignment") {
    // found by fuzz_gguf: re-writing metadata with general.alignment = 2^28
    // padded the (empty) data section to 256 MiB
    GGUFWriter w;
    w.set("general.alignment", uint32_t(1) << 28);
    const auto bytes = w.to_bytes();
    CHECK(bytes.size() < 100);
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size());
    CHECK(f.alignment() == (uint32_t(1) << 28));
    CHECK(f.tensors().empty());
}

TEST_CASE("GGUF writer refuses inconsistent tensors") {
    GGUFWriter w;
    std::vector<float> x(64);
    CHECK_THROWS_WITH_AS(w.add_tensor("a", GGMLType::F32, {65}, x),
                         "GGUF writer: tensor a: 64 values given for a shape of 65 elements", sixstep::Error);
    CHECK_THROWS_WITH_AS(w.add_tensor("a", GGMLType::Q8_0, {48}, x),
                         "GGUF writer: tensor a: ne[0] = 48 is not a multiple of the q8_0 block size 32",
                         sixstep::Error);
    w.add_tensor("a", GGMLType::F32, {64}, x);
    CHECK_THROWS_WITH_AS(w.add_tensor("a", GGMLType::F32, {64}, x), "GGUF writer: tensor a added twice",
                         sixstep::Error);
    CHECK_THROWS_WITH_AS(w.set_alignment(48), "GGUF writer: general.alignment must be a u32 power of two, got 48",
                         sixstep::Error);
    CHECK_THROWS_WITH_AS(w.set("general.alignment", "32"),
                         "GGUF writer: general.alignment must be a u32 power of two, got \"32\"", sixstep::Error);
}

TEST_CASE("GGUF accepts known but unsupported tensor types and refuses to compute with them") {
    GGUFWriter w;
    std::vector<uint8_t> raw(144, 0);  // one Q4_K block of 256 values
    w.add_tensor_raw("blk.0.ffn_down.weight", GGMLType::Q4_K, {256}, raw);
    const auto bytes = w.to_bytes();
    const auto f = GGUFFile::from_buffer(bytes.data(), bytes.size(), "k.gguf");
    const auto& t = f.tensor("blk.0.ffn_down.weight");
    CHECK(t.type == GGMLType::Q4_K);
    CHECK(t.n_bytes == 144);
    CHECK_THROWS_WITH_AS(t.require_supported(),
                         "tensor blk.0.ffn_down.weight: type q4_K is not supported by sixstep (supported: f32, f16, "
                         "q8_0, q4_0)",
                         sixstep::Error);
}

TEST_CASE("GGUF reads the real vocabulary fixtures") {
    const auto f = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-llama-spm.gguf");
    CHECK(f.get_str("tokenizer.ggml.model") == "llama");
    CHECK(f.get("tokenizer.ggml.tokens").size() == 32000);
    CHECK(f.get_arr_f32("tokenizer.ggml.scores").size() == 32000);
    CHECK(f.tensors().empty());
    const auto g = GGUFFile::open(std::string(SIXSTEP_TEST_DATA) + "/tokenizers/ggml-vocab-gpt-2.gguf");
    CHECK(g.get_str("tokenizer.ggml.model") == "gpt2");
    CHECK(g.get("tokenizer.ggml.merges").size() > 40000);
}

// ---- broken files: one clear message each -----------------------------------------------

TEST_CASE("GGUF bad input: missing, empty, bad magic, unsupported version") {
    CHECK_THROWS_WITH_AS(GGUFFile::open("/nonexistent/x.gguf"),
                         "cannot open /nonexistent/x.gguf: No such file or directory", sixstep::Error);
    CHECK_THROWS_WITH_AS(GGUFFile::open(SIXSTEP_TEST_DATA), contains("not a regular file"), sixstep::Error);
    CHECK(parse_error({}) == "bad.gguf: not a GGUF file: it is only 0 bytes long");

    auto bytes = small_writer().to_bytes();
    auto bad = bytes;
    std::memcpy(bad.data(), "GGML", 4);
    CHECK(parse_error(bad) == "bad.gguf: not a GGUF file: bad magic \"GGML\" at byte 0 (expected \"GGUF\")");

    bad = bytes;
    poke<uint32_t>(bad, 4, 1);
    CHECK(parse_error(bad) ==
          "bad.gguf: unsupported GGUF version 1 at byte 4 (sixstep reads versions 2 and 3) (version 1 is an "
          "obsolete format; convert the file again)");
    bad = bytes;
    poke<uint32_t>(bad, 4, 0x03000000);
    CHECK(parse_error(bad) ==
          "bad.gguf: unsupported GGUF version 50331648 at byte 4 (sixstep reads versions 2 and 3) (a big-endian "
          "file?)");
    bad = bytes;
    poke<uint32_t>(bad, 4, 2);  // v2 has the same layout: accepted
    CHECK(parse_error(bad) == "(no error)");
}

TEST_CASE("GGUF bad input: truncated anywhere gives an error, never a crash") {
    const auto bytes = small_writer().to_bytes();
    CHECK(parse_error(bytes) == "(no error)");
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
        const std::string err = parse_error(cut);
        CAPTURE(n);
        CHECK(err.rfind("bad.gguf: ", 0) == 0);
    }
    // two representative messages
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + 20);
    CHECK(parse_error(cut) == "bad.gguf: unexpected end of file at byte 16 reading the metadata count (needs 8 "
                              "bytes, 4 left)");
    cut.assign(bytes.begin(), bytes.end() - 1);
    CHECK(dstr(parse_error(cut)) == contains("bad.gguf: tensor output_norm.weight: data ["));
    CHECK(dstr(parse_error(cut)) == contains(") is beyond the end of the file (size " + std::to_string(cut.size()) + ")"));
}

TEST_CASE("GGUF bad input: counts and lengths larger than the file") {
    auto bytes = small_writer().to_bytes();
    auto bad = bytes;
    poke<uint64_t>(bad, 16, uint64_t(1) << 40);  // n_kv
    CHECK(parse_error(bad) == "bad.gguf: header at byte 16 claims 1099511627776 metadata entries: impossible in a "
                              "file of " + std::to_string(bytes.size()) + " bytes");
    bad = bytes;
    poke<uint64_t>(bad, 8, ~uint64_t(0));  // n_tensors
    CHECK(dstr(parse_error(bad)) == contains("header at byte 8 claims 18446744073709551615 tensors: impossible"));

    // the first key's length
    bad = bytes;
    poke<uint64_t>(bad, 24, uint64_t(1) << 50);
    CHECK(dstr(parse_error(bad)) == contains("bad.gguf: the key of metadata entry 0 at byte 24 has length "
                                                "1125899906842624, beyond the end of the file"));

    // an array count far beyond the file: no allocation, a clear error
    const size_t tokens = find_bytes(bad = bytes, "tokenizer.ggml.tokens") + std::strlen("tokenizer.ggml.tokens");
    // layout after the key: u32 type (ARRAY), u32 element type, u64 count
    poke<uint64_t>(bad, tokens + 8, uint64_t(1) << 61);
    CHECK(dstr(parse_error(bad)) == contains("bad.gguf: metadata key tokenizer.ggml.tokens: array at byte " +
                                                std::to_string(tokens + 4) + " claims 2305843009213693952 elements of type str"));

    bad = bytes;
    poke<uint32_t>(bad, tokens, 13);  // value type 13 does not exist
    CHECK(parse_error(bad) == "bad.gguf: metadata key tokenizer.ggml.tokens: unknown value type 13 at byte " +
                                  std::to_string(tokens));
}

TEST_CASE("GGUF bad input: tensor info fields") {
    const auto bytes = small_writer().to_bytes();
    const size_t at = tensor_fields(bytes, "token_embd.weight");  // n_dims u32, ne0 u64, ne1 u64, type u32, offset u64
    auto bad = bytes;

    poke<uint32_t>(bad, at, 5);
    CHECK(parse_error(bad) == "bad.gguf: tensor token_embd.weight: n_dims = 5 at byte " + std::to_string(at) +
                                  " (must be 1 to 4)");

    bad = bytes;
    poke<uint64_t>(bad, at + 4 + 8, 0);
    CHECK(parse_error(bad) == "bad.gguf: tensor token_embd.weight: ne[1] = 0 at byte " + std::to_string(at + 12) +
                                  " is not a valid dimension");

    bad = bytes;
    poke<uint64_t>(bad, at + 4, uint64_t(1) << 62);
    poke<uint64_t>(bad, at + 12, 8);
    CHECK(dstr(parse_error(bad)) == contains("bad.gguf: tensor token_embd.weight: shape overflows"));

    bad = bytes;
    poke<uint32_t>(bad, at + 20, 77);
    CHECK(parse_error(bad) == "bad.gguf: tensor token_embd.weight: unknown ggml type id 77 at byte " +
                                  std::to_string(at + 20));

    bad = bytes;
    poke<uint32_t>(bad, at + 20, static_cast<uint32_t>(GGMLType::Q4_K));  // ne0 = 64: not a multiple of 256
    CHECK(parse_error(bad) ==
          "bad.gguf: tensor token_embd.weight: ne[0] = 64 is not a multiple of the q4_K block size 256");

    bad = bytes;
    poke<uint64_t>(bad, at + 24, 3);
    CHECK(parse_error(bad) == "bad.gguf: tensor token_embd.weight: data offset 3 at byte " + std::to_string(at + 24) +
                                  " is not a multiple of the alignment 32");

    bad = bytes;
    poke<uint64_t>(bad, at + 24, uint64_t(1) << 40);
    CHECK(dstr(parse_error(bad)) == contains("bad.gguf: tensor token_embd.weight: data [10995116"));
    CHECK(dstr(parse_error(bad)) == contains("is beyond the end of the file (size " + std::to_string(bytes.size()) + ")"));

    // a wrong shape that makes the data run past the end of the file
    bad = bytes;
    poke<uint64_t>(bad, at + 12, 300);
    CHECK(dstr(parse_error(bad)) == contains("bad.gguf: tensor token_embd.weight: data ["));
}

TEST_CASE("GGUF bad input: overlapping tensors, duplicates, bad alignment") {
    auto bytes = small_writer().to_bytes();
    auto bad = bytes;
    const size_t norm = tensor_fields(bytes, "output_norm.weight");  // n_dims, ne0, type, offset
    poke<uint64_t>(bad, norm + 4 + 8 + 4, 0);                       // same offset as token_embd.weight
    CHECK(dstr(parse_error(bad)) == contains("bad.gguf: tensors "));
    CHECK(dstr(parse_error(bad)) == contains(" overlap: data offsets [0, "));

    // rename the second tensor to the first's name (same length: "output_norm.weight" vs "token_embd.weight" differ,
    // so build it with keys instead)
    GGUFWriter w;
    w.set("general.name", "abc");
    w.set("general.nbme", "abd");
    bytes = w.to_bytes();
    bad = bytes;
    bad[find_bytes(bad, "general.nbme") + 9] = 'a';
    CHECK(parse_error(bad) == "bad.gguf: metadata key general.name: duplicate key at byte " +
                                  std::to_string(find_bytes(bytes, "general.nbme") - 8));

    GGUFWriter tw;
    std::vector<float> x(32);
    tw.add_tensor("wa", GGMLType::F32, {32}, x);
    tw.add_tensor("wb", GGMLType::F32, {32}, x);
    bytes = tw.to_bytes();
    bad = bytes;
    bad[tensor_fields(bytes, "wb") - 1] = 'a';
    CHECK(parse_error(bad) == "bad.gguf: tensor wa: duplicate tensor name at byte " +
                                  std::to_string(tensor_fields(bytes, "wb") - 10));

    GGUFWriter aw;
    aw.set("general.alignment", uint32_t(64));
    bytes = aw.to_bytes();
    bad = bytes;
    const size_t type_at = find_bytes(bytes, "general.alignment") + std::strlen("general.alignment");
    poke<uint32_t>(bad, type_at + 4, 48);
    CHECK(parse_error(bad) == "bad.gguf: general.alignment = 48 is not a power of two");
    poke<uint32_t>(bad, type_at, static_cast<uint32_t>(GGUFValueType::INT32));
    CHECK(parse_error(bad) == "bad.gguf: general.alignment must be a u32, found i32");
}

TEST_CASE("GGUF bad input: tensor data not aligned for its type (general.alignment = 1)") {
    // With alignment 1, an F32 tensor after a 2-byte F16 one, or a Q8_0 one
    // after an odd header, may start at a byte its type cannot be read from
    // in place. Key lengths 0 … 7 place the data section at every residue.
    int refused = 0;
    for (int pad = 0; pad < 8; ++pad) {
        GGUFWriter w;
        w.set_alignment(1);
        w.set("general.name", std::string(static_cast<size_t>(pad), 'x'));
        w.add_tensor("h", GGMLType::F16, {1}, std::vector<float>{1.0f});
        w.add_tensor("f", GGMLType::F32, {1}, std::vector<float>{2.0f});
        w.add_tensor("q", GGMLType::Q8_0, {32}, std::vector<float>(32, 3.0f));
        const auto bytes = w.to_bytes();
        const std::string err = parse_error(bytes);
        CAPTURE(pad);
        CAPTURE(err);
        if (err == "(no error)") {
            const GGUFFile f = GGUFFile::from_buffer(bytes.data(), bytes.size(), "ok.gguf");
            CHECK(reinterpret_cast<uintptr_t>(f.find_tensor("f")->data) % 4 == 0);
            CHECK(reinterpret_cast<uintptr_t>(f.find_tensor("q")->data) % 2 == 0);
            CHECK(f.find_tensor("f")->to_f32() == std::vector<float>{2.0f});
        } else {
            CHECK(dstr(err) == contains(" data at byte "));
            CHECK(dstr(err) == contains(" bytes (general.alignment = 1)"));
            ++refused;
        }
    }
    CHECK(refused > 0);
}

TEST_CASE("GGUF bad input: a bool that is neither 0 nor 1, arrays nested too deep") {
    GGUFWriter w;
    w.set("flag", true);
    auto bytes = w.to_bytes();
    const size_t value_at = find_bytes(bytes, "flag") + 4 + 4;  // after the key and the u32 type
    REQUIRE(bytes[value_at] == 1);
    bytes[value_at] = 7;
    CHECK(parse_error(bytes) == "bad.gguf: metadata key flag: bool value at byte " + std::to_string(value_at) +
                                    " is 7, not 0 or 1");

    GGUFValue v(std::vector<int32_t>{1});
    for (int i = 0; i < 10; ++i) v = GGUFValue::array(GGUFValueType::ARRAY, {v});
    GGUFWriter d;
    d.set("deep", v);
    CHECK(dstr(parse_error(d.to_bytes())) == contains("bad.gguf: metadata key deep: array at byte "));
    CHECK(dstr(parse_error(d.to_bytes())) == contains("is nested more than 8 deep"));
}

TEST_CASE("GGUF bad input: random corruption never crashes") {
    const auto bytes = small_writer().to_bytes();
    std::mt19937 rng(1234);
    int errors = 0, parsed = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        auto bad = bytes;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int i = 0; i < flips; ++i) bad[rng() % 160] = static_cast<uint8_t>(rng());  // the header region
        try {
            const auto f = GGUFFile::from_buffer(bad.data(), bad.size(), "bad.gguf");
            for (const auto& t : f.tensors()) REQUIRE(t.data + t.n_bytes <= bad.data() + bad.size());
            ++parsed;
        } catch (const sixstep::Error& e) {
            REQUIRE(std::string(e.what()).rfind("bad.gguf: ", 0) == 0);
            ++errors;
        }
    }
    CHECK(errors > 0);
    CHECK(errors + parsed == 3000);
}
