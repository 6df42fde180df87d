// The prefix cache's keys, hits, LRU eviction and reference counts; the
// contiguous allocator's first fit and holes; contiguous vs paged on the same
// requests.
#include <algorithm>

#include <doctest/doctest.h>

#include "error_of.h"
#include "serving_fixture.h"

#include "pipeline/core/error.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/serving/contiguous_allocator.h"
#include "pipeline/serving/kv_snapshot.h"
#include "pipeline/serving/prefix_cache.h"
#include "pipeline/serving/traffic.h"

using namespace sixstep::serving;
using sixstep::llm::KvBlocks;
using sixstep::test::error_of;
using sixstep::test::request;

namespace {

// A sequence holding tokens in fresh blocks (as after a forward pass).
int fill(KvBlocks& b, const std::vector<int>& tokens) {
    std::vector<sixstep::llm::BlockCopy> copies;
    const int s = b.add_sequence();
    b.reserve(s, 0, static_cast<int>(tokens.size()), copies);
    b.commit(s, static_cast<int>(tokens.size()));
    return s;
}

std::vector<std::uint64_t> hashes_of(const std::vector<int>& tokens, int bs) {
    std::vector<std::uint64_t> h;
    extend_block_hashes(tokens, bs, h);
    return h;
}

}  // namespace

TEST_CASE("prefix cache: a block's key covers everything before it") {
    const std::vector<int> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<int> b = a;
    b[0] = 99;  // same second block, different first
    const auto ha = hashes_of(a, 4), hb = hashes_of(b, 4);
    REQUIRE(ha.size() == 2);  // two full blocks; the 9th token waits for a third
    CHECK(ha[0] != hb[0]);
    CHECK(ha[1] != hb[1]);    // the second block's own tokens match, its past does not
    std::vector<std::uint64_t> grown = {ha[0]};
    extend_block_hashes(a, 4, grown);  // extends from where it stopped
    CHECK(grown == ha);
}

TEST_CASE("prefix cache: hits share blocks by reference count, and eviction frees the least recently used, deepest first") {
    KvBlocks b({.n_ctx = 64, .block_size = 4, .n_blocks = 8});
    PrefixCache cache(b);
    const std::vector<int> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const auto ha = hashes_of(a, 4);
    const int sa = fill(b, a);  // 3 blocks, 2 full
    cache.insert(a, ha, b.block_table(sa), 2);
    CHECK(cache.size() == 2);
    CHECK(b.ref_count(b.block_table(sa)[0]) == 2);
    CHECK(cache.n_evictable() == 0);  // the sequence still holds them

    // Another request with the same first 8 tokens adopts both blocks.
    std::vector<int> c = {1, 2, 3, 4, 5, 6, 7, 8, 42};
    const auto hc = hashes_of(c, 4);
    const std::vector<int> hit = cache.match(c, hc, 2);
    CHECK(hit == std::vector<int>(b.block_table(sa).begin(), b.block_table(sa).begin() + 2));
    const int sc = b.add_sequence();
    b.adopt(sc, hit);
    cache.touch(hit);
    CHECK(b.ref_count(hit[0]) == 3);
    CHECK(b.n_tokens(sc) == 8);
    // A prompt that differs in block 0 matches nothing, even where block 1 agrees.
    std::vector<int> d = c;
    d[1] = 77;
    CHECK(cache.match(d, hashes_of(d, 4), 2).empty());
    // max_blocks caps the hit (a request must still read one token).
    CHECK(cache.match(c, hc, 1).size() == 1);

    b.free_sequence(sa);
    b.free_sequence(sc);
    CHECK(cache.n_evictable() == 2);   // only the cache holds them now
    CHECK(b.n_free() == 6);
    // Used at the same moment: the deeper block goes first, so the head stays reachable.
    CHECK(cache.evict(1) == 1);
    CHECK(cache.cached(hit[0]));
    CHECK_FALSE(cache.cached(hit[1]));
    CHECK(cache.match(c, hc, 2) == std::vector<int>{hit[0]});
    CHECK(cache.evict(5) == 1);         // only one left to give
    CHECK(cache.size() == 0);
    CHECK(b.n_free() == 8);
    CHECK(cache.stats().n_evicted == 2);
}

TEST_CASE("prefix cache: the least recently used prefix is evicted before a fresher one") {
    KvBlocks b({.n_ctx = 64, .block_size = 2, .n_blocks = 8});
    PrefixCache cache(b);
    const std::vector<int> x = {1, 2, 3}, y = {5, 6, 7};
    const auto hx = hashes_of(x, 2), hy = hashes_of(y, 2);
    const int sx = fill(b, x), sy = fill(b, y);
    cache.insert(x, hx, b.block_table(sx), 1);
    cache.insert(y, hy, b.block_table(sy), 1);
    const int bx = b.block_table(sx)[0], by = b.block_table(sy)[0];
    b.free_sequence(sx);
    b.free_sequence(sy);
    cache.touch(cache.match(x, hx, 1));  // x used again: y is now the older one
    CHECK(cache.evict(1) == 1);
    CHECK(cache.cached(bx));
    CHECK_FALSE(cache.cached(by));
}

TEST_CASE("prefix cache: destroying it lets go of every block") {
    KvBlocks b({.n_ctx = 64, .block_size = 2, .n_blocks = 4});
    {
        PrefixCache cache(b);
        const std::vector<int> x = {1, 2, 3, 4, 5};
        const int s = fill(b, x);
        cache.insert(x, hashes_of(x, 2), b.block_table(s), 2);
        b.free_sequence(s);
        CHECK(b.n_used() == 2);
    }
    CHECK(b.n_used() == 0);
}

TEST_CASE("contiguous allocator: first fit, and holes that add up but do not fit") {
    ContiguousAllocator a(10);
    CHECK(a.allocate(1, 3) == 0);
    CHECK(a.allocate(2, 3) == 3);
    CHECK(a.allocate(3, 3) == 6);
    CHECK_FALSE(a.allocate(4, 2).has_value());  // 1 unit left
    a.free(1);
    a.free(3);
    CHECK(a.n_free() == 7);
    CHECK(a.largest_hole() == 4);               // 3 at the start, 4 at the end
    CHECK_FALSE(a.allocate(5, 5).has_value());  // 7 free, no run of 5: external fragmentation
    CHECK(a.allocate(5, 4) == 6);               // first hole too small; the one at 6 fits
    CHECK(a.allocate(6, 2) == 0);               // first fit: the lowest hole
    const auto regions = a.regions();
    REQUIRE(regions.size() == 3);
    CHECK(regions[0].owner == 6);
    CHECK(regions[1].owner == 2);
    CHECK(regions[2].owner == 5);
    CHECK(error_of([&] { a.free(9); }) == "contiguous KV: request 9 holds no region");
    // A hole of exactly the size asked for is taken.
    ContiguousAllocator exact(12);
    CHECK(exact.allocate(1, 4) == 0);
    CHECK(exact.allocate(2, 4) == 4);
    CHECK(exact.allocate(3, 4) == 8);
    exact.free(2);
    CHECK(exact.allocate(4, 4) == 4);
    CHECK(error_of([&] { a.allocate(2, 1); }) == "contiguous KV: request 2 already holds a region");
}

TEST_CASE("kv layouts: the same requests fit fewer at once with contiguous reservations, and waste more") {
    sixstep::test::TinyModel m;
    sixstep::test::EchoBackend echo(m.model);
    // Forty requests at once, each allowed 40 new tokens.
    std::vector<RequestSpec> reqs;
    for (int i = 0; i < 40; ++i)
        reqs.push_back(request(i, 0, std::vector<int>(6, 3 + i), 40));
    TrafficParams p;
    p.scheduler.max_batch = 16;
    p.scheduler.stop_at_eog = false;  // every request generates its max
    p.kv_blocks = 48;
    p.block_size = 4;
    // Requests 0..39 each want 6 + 40 − 1 = 45 positions = 12 blocks when reserved up front.
    const KvLayoutComparison c = compare_kv_layouts(echo, *m.codec, reqs, p, linear_cost(1, 0.01));
    const double peak_paged = c.paged.report.total("running_peak").value;
    const double peak_contig = c.contiguous.report.total("running_peak").value;
    MESSAGE("running at once: paged peak " << peak_paged << ", contiguous peak " << peak_contig);
    CHECK(peak_contig == 4);   // 48 / 12
    CHECK(peak_paged > peak_contig);
    CHECK(c.contiguous.report.total("kv_token_share").value < c.paged.report.total("kv_token_share").value);
    CHECK(c.contiguous.report.total("kv_internal_waste").value > c.paged.report.total("kv_internal_waste").value);
    CHECK(c.paged.report.total("kv_external_waste").value == 0);
    CHECK(c.contiguous.report.total("preemptions").value == 0);  // a reservation never runs out
    for (const TrafficRun* r : {&c.paged, &c.contiguous})
        for (const RequestRecord& q : r->requests) CHECK(q.output.size() == 40u);
    // A reservation's blocks are used from the pass it is made, tokens or
    // not: four requests set aside the whole pool of 48, and every block
    // counted as used holds the positions counted as set aside.
    CHECK(c.contiguous.report.total("kv_blocks_peak").value == 48);
    for (const TrafficRun* r : {&c.paged, &c.contiguous}) {
        const auto apart = std::count_if(r->steps.begin(), r->steps.end(), [](const StepRecord& s) {
            return s.n_slots_held != static_cast<long long>(s.n_blocks_used) * 4;
        });
        CHECK(apart == 0);
    }
    // The map of the contiguous pool at its fullest lays each run out as it
    // would sit in memory: the request's tokens from the run's first block,
    // then the rest of the run reserved for it and empty.
    const KvSnapshot& k = c.contiguous.kv_peak;
    REQUIRE(k.contiguous);
    REQUIRE(k.regions.size() == 4);
    long long tokens = 0;
    for (const KvTableView& t : k.tables) tokens += t.n_tokens;
    CHECK(tokens > 0);
    CHECK(k.n_filled() == tokens);
    for (const ContiguousRegion& r : k.regions) {
        CAPTURE(r.owner);
        const auto t = std::find_if(k.tables.begin(), k.tables.end(), [&](const KvTableView& v) { return v.request == r.owner; });
        REQUIRE(t != k.tables.end());
        const int written = (t->n_tokens + 3) / 4;
        REQUIRE(written >= 1);
        REQUIRE(static_cast<int>(t->blocks.size()) == written);
        for (int i = 0; i < r.size; ++i) {
            const KvBlockView& b = k.blocks[static_cast<std::size_t>(r.begin + i)];
            CHECK(b.reserved_for == r.owner);
            CHECK(b.owners == (i < written ? std::vector<int>{r.owner} : std::vector<int>{}));
            if (i < written) CHECK(t->blocks[static_cast<std::size_t>(i)] == r.begin + i);
        }
    }
}

TEST_CASE("kv layouts: varied lengths leave holes in contiguous memory that pages do not have") {
    sixstep::test::TinyModel m;
    sixstep::test::EchoBackend echo(m.model);
    std::vector<RequestSpec> reqs;
    // Alternating short and long requests, all waiting at once.
    for (int i = 0; i < 30; ++i)
        reqs.push_back(request(i, static_cast<double>(i), std::vector<int>(4, 3 + i), i % 2 ? 5 : 37));
    TrafficParams p;
    p.scheduler.max_batch = 16;
    p.scheduler.stop_at_eog = false;
    p.kv_blocks = 40;
    p.block_size = 4;
    const KvLayoutComparison c = compare_kv_layouts(echo, *m.codec, reqs, p, linear_cost(1, 0.01));
    const double ext = c.contiguous.report.total("kv_external_waste").value;
    MESSAGE("contiguous external fragmentation " << ext << "% of the pool");
    CHECK(ext > 0);
    CHECK(c.paged.report.total("kv_external_waste").value == 0);
}
