// The block manager: reference counts, forks, copy-on-write, adopted
// prefixes, and no leak after many random arrivals and departures.
#include <doctest/doctest.h>

#include "error_of.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/llm/kv/kv_cache.h"

#include <fmt/format.h>

using namespace sixstep::llm;
using sixstep::test::error_of;


TEST_CASE("kv blocks: a fork shares every block, and a write into a shared block copies it first") {
    KvBlocks b({.n_ctx = 64, .block_size = 4, .n_blocks = 8});
    std::vector<BlockCopy> copies;
    const int s = b.add_sequence();
    b.reserve(s, 0, 6, copies);  // blocks for positions 0..3 and 4..5
    b.commit(s, 6);
    CHECK(copies.empty());
    const std::vector<int> table = b.block_table(s);
    REQUIRE(table.size() == 2);

    const int t = b.fork_sequence(s);
    CHECK(b.block_table(t) == table);
    CHECK(b.n_tokens(t) == 6);
    CHECK(b.ref_count(table[0]) == 2);
    CHECK(b.ref_count(table[1]) == 2);
    CHECK(b.n_used() == 2);
    CHECK(b.n_shared() == 2);

    // t appends position 6: it lands in the half-full shared block 1.
    b.reserve(t, 6, 7, copies);
    REQUIRE(copies.size() == 1);
    CHECK(copies[0].src == table[1]);
    CHECK(copies[0].dst == b.block_table(t)[1]);
    CHECK(b.block_table(t)[0] == table[0]);  // the full first block stays shared
    CHECK(b.ref_count(table[1]) == 1);
    CHECK(b.ref_count(copies[0].dst) == 1);
    CHECK(b.n_shared() == 1);

    b.free_sequence(s);
    CHECK(b.ref_count(table[0]) == 1);
    CHECK(b.ref_count(table[1]) == 0);  // only s held it any more
    b.free_sequence(t);
    CHECK(b.n_free() == 8);
}

TEST_CASE("kv blocks: a copy-on-write that does not fit changes nothing") {
    KvBlocks b({.n_ctx = 64, .block_size = 4, .n_blocks = 2});
    std::vector<BlockCopy> copies;
    const int s = b.add_sequence();
    b.reserve(s, 0, 6, copies);
    b.commit(s, 6);
    const int t = b.fork_sequence(s);
    const std::string e = error_of([&] { b.reserve(t, 6, 7, copies); });
    CHECK(e == "KV cache full: sequence 1 needs 1 more blocks of 4 positions but only 0 of 2 are free");
    CHECK(copies.empty());
    CHECK(b.block_table(t) == b.block_table(s));
    CHECK(b.ref_count(b.block_table(s)[1]) == 2);
}

TEST_CASE("kv blocks: adopted prefix blocks gain an owner, and other owners retain and release") {
    KvBlocks b({.n_ctx = 64, .block_size = 4, .n_blocks = 8});
    std::vector<BlockCopy> copies;
    const int s = b.add_sequence();
    b.reserve(s, 0, 8, copies);
    b.commit(s, 8);
    const std::vector<int> prefix = b.block_table(s);
    for (int blk : prefix) b.retain(blk);  // a prefix cache keeps them
    b.free_sequence(s);
    CHECK(b.ref_count(prefix[0]) == 1);
    CHECK(b.n_free() == 6);

    const int t = b.add_sequence();
    b.adopt(t, prefix);
    CHECK(b.n_tokens(t) == 8);
    CHECK(b.ref_count(prefix[1]) == 2);
    b.reserve(t, 8, 9, copies);  // a new block after the prefix: nothing to copy
    CHECK(copies.empty());
    CHECK(b.block_table(t).size() == 3);

    CHECK(error_of([&] { b.adopt(t, prefix); }) == "KV cache: sequence 0 is not empty: cannot adopt blocks");
    b.free_sequence(t);
    for (int blk : prefix) b.release(blk);
    CHECK(b.n_free() == 8);
    CHECK(error_of([&] { b.release(prefix[0]); }) == fmt::format("KV cache: block {} is already free", prefix[0]));
    CHECK(error_of([&] { b.retain(prefix[0]); }) == fmt::format("KV cache: block {} is free: nothing to retain", prefix[0]));
}

TEST_CASE("kv blocks: the edges of reserve, commit, truncate and adopt") {
    KvBlocks b({.n_ctx = 8, .block_size = 4, .n_blocks = 4});
    std::vector<BlockCopy> copies;
    const int s = b.add_sequence();
    // A fresh pool hands out its low blocks first, in order (one sequence stays contiguous).
    b.reserve(s, 0, 6, copies);
    CHECK(b.block_table(s) == std::vector<int>{0, 1});
    b.commit(s, 6);
    // A commit of fewer positions (a batch that rewrote an early one) keeps the later ones.
    b.commit(s, 3);
    CHECK(b.n_tokens(s) == 6);

    // An empty range makes nothing writable: no block, no copy of a shared one.
    const int t = b.fork_sequence(s);
    b.reserve(t, 2, 2, copies);
    b.reserve(t, 6, 6, copies);
    CHECK(copies.empty());
    CHECK(b.block_table(t) == b.block_table(s));
    CHECK(b.n_free() == 2);
    b.free_sequence(t);

    // Given back last block first: the next sequence gets the same blocks in the same order.
    b.free_sequence(s);
    const int u = b.add_sequence();
    b.reserve(u, 0, 8, copies);
    CHECK(b.block_table(u) == std::vector<int>{0, 1});
    // Below zero is zero.
    b.commit(u, 8);
    b.truncate(u, -1);
    CHECK(b.n_tokens(u) == 0);
    CHECK(b.block_table(u).empty());
    CHECK(b.n_free() == 4);

    // A prefix as long as the whole context may be adopted; a free block may not.
    b.reserve(u, 0, 8, copies);
    b.commit(u, 8);
    const std::vector<int> whole = b.block_table(u);
    const int v = b.add_sequence();
    b.adopt(v, whole);
    CHECK(b.n_tokens(v) == 8);
    const int w = b.add_sequence();
    CHECK(error_of([&] { b.adopt(w, std::vector<int>{3}); }) == "KV cache: block 3 is not in use: cannot adopt it");
    CHECK(b.block_table(w).empty());

    // The pool's limits are inclusive.
    CHECK_NOTHROW(check_kv_pool(max_kv_blocks, max_block_size));
    CHECK_THROWS(check_kv_pool(max_kv_blocks + 1, 1));
    CHECK_THROWS(check_kv_pool(1, max_block_size + 1));
}

TEST_CASE("kv blocks: 10,000 random arrivals, growths, forks and departures leak nothing") {
    KvBlocks b({.n_ctx = 200, .block_size = 8, .n_blocks = 64});
    std::mt19937 rng(7);
    std::vector<BlockCopy> copies;
    std::vector<int> live;
    int full = 0;
    for (int op = 0; op < 10000; ++op) {
        const int what = static_cast<int>(rng() % 4);
        try {
            if (what == 0 || live.empty()) {
                live.push_back(b.add_sequence());
            } else if (what == 1) {
                const int s = live[rng() % live.size()];
                const int n = b.n_tokens(s);
                b.reserve(s, n, n + 1 + static_cast<int>(rng() % 20), copies);
                b.commit(s, n + 1);
            } else if (what == 2) {
                live.push_back(b.fork_sequence(live[rng() % live.size()]));
            } else {
                const std::size_t i = rng() % live.size();
                b.free_sequence(live[i]);
                live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
            }
        } catch (const sixstep::Error& e) {
            CHECK(std::string(e.what()).find("KV cache full") == 0);
            ++full;
        }
        // Every block's count equals the number of tables holding it.
        if (op % 500 == 0) {
            std::map<int, int> owners;
            for (int s : live)
                for (int blk : b.block_table(s)) ++owners[blk];
            int used = 0;
            for (int blk = 0; blk < b.n_blocks(); ++blk) {
                CHECK(b.ref_count(blk) == owners[blk]);
                used += owners[blk] > 0;
            }
            CHECK(used == b.n_used());
        }
    }
    MESSAGE(full << " of 10000 operations found the cache full");
    CHECK(full > 0);  // the pool was small enough to run out
    for (int s : live) b.free_sequence(s);
    CHECK(b.n_free() == b.n_blocks());
    for (int blk = 0; blk < b.n_blocks(); ++blk) CHECK(b.ref_count(blk) == 0);
}

TEST_CASE("kv cache: memory is allocated block by block, on first use") {
    // A context of a million positions costs nothing until it is used.
    KvCache kv({.n_layer = 2, .n_head_kv = 2, .head_dim = 8, .n_ctx = 1 << 20, .block_size = 16});
    const KvCacheStats empty = kv.stats();
    CHECK(empty.bytes_total == empty.bytes_per_token * (1u << 20));
    CHECK(empty.bytes_allocated == 0);
    const int s = kv.add_sequence();
    kv.reserve(s, 20);  // two blocks
    const std::size_t block_bytes = kv.stats().bytes_per_token * 16;
    CHECK(kv.stats().bytes_allocated == 2 * block_bytes);
    kv.free_sequence(s);
    const int t = kv.add_sequence();
    kv.reserve(t, 20);  // the same two blocks again: no new memory
    CHECK(kv.stats().bytes_allocated == 2 * block_bytes);
}

TEST_CASE("kv cache: copy-on-write copies the keys and values of the shared block") {
    KvCache kv({.n_layer = 2, .n_head_kv = 1, .head_dim = 4, .n_ctx = 32, .block_size = 4});
    const int s = kv.add_sequence();
    kv.reserve(s, 6);
    for (int p = 0; p < 6; ++p)
        for (int l = 0; l < 2; ++l) {
            kv.k(l, s, p)[0] = static_cast<float>(100 * l + p);
            kv.v(l, s, p)[3] = static_cast<float>(-100 * l - p);
        }
    kv.commit(s, 6);
    const int t = kv.fork_sequence(s);
    kv.reserve(t, 6, 7);
    CHECK(kv.block_table(t)[1] != kv.block_table(s)[1]);
    for (int p = 4; p < 6; ++p)
        for (int l = 0; l < 2; ++l) {
            CHECK(kv.k(l, t, p)[0] == static_cast<float>(100 * l + p));
            CHECK(kv.v(l, t, p)[3] == static_cast<float>(-100 * l - p));
        }
    kv.k(0, t, 5)[0] = 42;  // the copy is private
    CHECK(kv.k(0, s, 5)[0] == 5);
}
