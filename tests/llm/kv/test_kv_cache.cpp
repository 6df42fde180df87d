#include <doctest/doctest.h>

#include "error_of.h"

#include <cstdint>
#include <string>

#include "pipeline/core/aligned.h"
#include "pipeline/core/error.h"
#include "pipeline/llm/kv/kv_cache.h"

using namespace sixstep::llm;
using sixstep::test::error_of;

namespace {
KvCacheParams small_params() {
    KvCacheParams p;
    p.n_layer = 3;
    p.n_head_kv = 2;
    p.head_dim = 8;
    p.n_ctx = 40;
    p.block_size = 16;
    p.n_blocks = 5;
    return p;
}
}  // namespace

TEST_CASE("kv cache: bytes per token is 2 x n_layer x n_head_kv x head_dim x sizeof(float)") {
    KvCache kv(small_params());
    const KvCacheStats st = kv.stats();
    CHECK(st.bytes_per_token == 2u * 3 * 2 * 8 * sizeof(float));
    CHECK(st.bytes_per_token_layer == 2u * 2 * 8 * sizeof(float));
    CHECK(st.bytes_total == st.bytes_per_token * 16 * 5);
    CHECK(st.n_blocks == 5);
    CHECK(st.n_blocks_used == 0);
    CHECK(st.bytes_used == 0);
    REQUIRE(st.bytes_used_per_layer.size() == 3);
}

TEST_CASE("kv cache: blocks are allocated per sequence and returned on free") {
    KvCache kv(small_params());
    const int a = kv.add_sequence();
    const int b = kv.add_sequence();
    CHECK(a != b);
    kv.reserve(a, 17);  // two blocks
    kv.commit(a, 17);
    kv.reserve(b, 3);  // one block
    kv.commit(b, 3);
    KvCacheStats st = kv.stats();
    CHECK(st.n_blocks_used == 3);
    CHECK(st.n_sequences == 2);
    CHECK(st.n_tokens == 20);
    CHECK(st.bytes_used == 3u * 16 * st.bytes_per_token);
    CHECK(st.bytes_used_per_layer[1] == 3u * 16 * st.bytes_per_token_layer);
    CHECK(kv.block_table(a).size() == 2);
    CHECK(kv.n_tokens(a) == 17);

    // Rows of different positions, layers and K/V never overlap.
    *kv.k(0, a, 0) = 1;
    *kv.v(0, a, 0) = 2;
    *kv.k(1, a, 0) = 3;
    *kv.k(0, a, 16) = 4;
    *kv.k(0, b, 0) = 5;
    CHECK(*kv.k(0, a, 0) == 1);
    CHECK(*kv.v(0, a, 0) == 2);
    CHECK(*kv.k(1, a, 0) == 3);
    CHECK(*kv.k(0, a, 16) == 4);
    CHECK(*kv.k(0, b, 0) == 5);

    kv.free_sequence(a);
    st = kv.stats();
    CHECK(st.n_blocks_used == 1);
    CHECK(kv.n_free_blocks() == 4);
    CHECK_FALSE(kv.has_sequence(a));
    // The freed id is reused.
    CHECK(kv.add_sequence() == a);
}

TEST_CASE("kv cache: full pool and full context give clear errors") {
    KvCache kv(small_params());
    const int a = kv.add_sequence();
    const int b = kv.add_sequence();
    kv.reserve(a, 40);  // three blocks
    const std::string ctx = error_of([&] { kv.reserve(a, 41); });
    CHECK(ctx.find("KV cache full") == 0);
    CHECK(ctx.find("n_ctx") != std::string::npos);
    kv.reserve(b, 32);  // two more: pool exhausted
    const int c = kv.add_sequence();
    const std::string pool = error_of([&] { kv.reserve(c, 1); });
    CHECK(pool.find("KV cache full") == 0);
    CHECK(pool.find("0 of 5 are free") != std::string::npos);
    MESSAGE(pool);
    // After freeing, the same request succeeds.
    kv.free_sequence(a);
    CHECK_NOTHROW(kv.reserve(c, 1));
}

TEST_CASE("kv cache: truncate keeps only needed blocks, bad ids are errors") {
    KvCache kv(small_params());
    const int a = kv.add_sequence();
    kv.reserve(a, 40);
    kv.commit(a, 40);
    kv.truncate(a, 10);
    CHECK(kv.n_tokens(a) == 10);
    CHECK(kv.block_table(a).size() == 1);
    CHECK(error_of([&] { kv.n_tokens(7); }).find("no sequence 7") != std::string::npos);
    CHECK(error_of([&] { kv.commit(a, 20); }).find("reserved") != std::string::npos);
    KvCacheParams bad = small_params();
    bad.head_dim = 0;
    CHECK(error_of([&] { KvCache k2(bad); }).find("invalid shape") != std::string::npos);
}

TEST_CASE("kv cache: every block starts on a cache line (the attention kernels' vector loads stay inside lines)") {
    // Each block holds 2 x 3 layers x 16 positions x 16 floats: a multiple
    // of 64 bytes, so every layer's K and V rows start on a line too. From
    // malloc's 16-byte alignment, five blocks all on lines would be a chance
    // of one in a thousand.
    KvCacheParams p = small_params();
    p.n_ctx = 5 * 16;
    KvCache kv(p);
    const int seq = kv.add_sequence();
    kv.reserve(seq, 5 * 16);
    kv.commit(seq, 5 * 16);
    for (int layer = 0; layer < 3; ++layer)
        for (int pos = 0; pos < 5 * 16; pos += 16) {
            CAPTURE(layer);
            CAPTURE(pos);
            CHECK(reinterpret_cast<std::uintptr_t>(kv.k(layer, seq, pos)) % sixstep::cache_line_bytes == 0);
            CHECK(reinterpret_cast<std::uintptr_t>(kv.v(layer, seq, pos)) % sixstep::cache_line_bytes == 0);
        }
}
