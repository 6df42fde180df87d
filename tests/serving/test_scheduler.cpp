// The scheduler's invariants: every request served exactly once, with exactly
// the tokens it gets alone — however it was batched, chunked, preempted or
// helped by the prefix cache — and every KV block accounted for.
#include <doctest/doctest.h>

#include "error_of.h"
#include "serving_fixture.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "pipeline/core/error.h"
#include "pipeline/llm/generator.h"
#include "pipeline/llm/kv/kv_blocks.h"
#include "pipeline/serving/prefix_cache.h"
#include "pipeline/serving/traffic.h"

using namespace sixstep::serving;
using sixstep::test::EchoBackend;
using sixstep::test::TinyModel;
using sixstep::test::error_of;
using sixstep::test::request;

namespace {

// Requests from the built-in prompt pool, arriving on a Poisson clock.
std::vector<RequestSpec> workload(const TinyModel& m, int count, double rate, int max_tokens, int shared_prefix = 0,
                                  std::uint64_t seed = 7) {
    WorkloadParams w;
    w.arrivals = {.kind = ArrivalKind::poisson, .rate = rate, .count = count, .seed = seed};
    w.max_tokens = max_tokens;
    w.min_tokens = 1;
    w.shared_prefix = shared_prefix;
    return make_workload(w, *m.codec, m.bos());
}

TrafficParams setup(BatchPolicy policy, int max_batch, int kv_blocks, int block_size, int step_tokens = 256) {
    TrafficParams p;
    p.scheduler.policy = policy;
    p.scheduler.max_batch = max_batch;
    p.scheduler.max_step_tokens = step_tokens;
    p.scheduler.stop_at_eog = false;  // random weights: lengths as drawn
    p.kv_blocks = kv_blocks;
    p.block_size = block_size;
    return p;
}

// Each request alone, through the plain generator (greedy).
std::map<int, std::vector<int>> alone(TinyModel& m, const std::vector<RequestSpec>& reqs) {
    std::map<int, std::vector<int>> out;
    auto kv = m.backend->make_kv_cache();
    for (const RequestSpec& r : reqs) {
        sixstep::llm::GenerateParams gp;
        gp.n_predict = r.max_tokens;
        gp.sampling = greedy_sampling();
        gp.stop_at_eog = false;
        sixstep::llm::Stepper st(*m.backend, *kv);
        sixstep::llm::Generation g(*m.codec, r.prompt, gp);
        st.attach(g);
        while (!g.done()) {
            st.forward_all();
            g.sample();
        }
        out[r.id] = g.tokens();
    }
    return out;
}

// Every request exactly once, finished, with the expected tokens.
void check_served(const TrafficRun& run, const std::vector<RequestSpec>& reqs,
                  const std::map<int, std::vector<int>>& want) {
    REQUIRE(run.requests.size() == reqs.size());
    std::set<int> ids;
    for (const RequestRecord& r : run.requests) {
        CHECK(ids.insert(r.id).second);  // no duplicate
        CHECK(r.finished());
        CHECK(r.output.size() == r.token_ms.size());
        INFO("request " << r.id);
        CHECK(r.output == want.at(r.id));
    }
    CHECK(ids.size() == reqs.size());  // none lost
}

}  // namespace

TEST_CASE("scheduler: continuous batching with chunked prefill gives every request exactly its tokens alone") {
    TinyModel m;
    const auto reqs = workload(m, 12, 200, 10);
    const auto want = alone(m, reqs);
    // 5 tokens per step: prompts are read in chunks, mixed with decode rows.
    const TrafficRun run = run_traffic(*m.backend, *m.codec, reqs, setup(BatchPolicy::continuous, 4, 64, 4, 5),
                                       linear_cost(2, 0.1));
    check_served(run, reqs, want);
    int mixed = 0, max_seqs = 0;
    for (const StepRecord& s : run.steps) {
        CHECK(s.shape.n_tokens <= 5);
        CHECK(s.n_running <= 4);
        mixed += s.shape.n_decode > 0 && s.shape.n_prefill_tokens > 0;
        max_seqs = std::max(max_seqs, s.shape.n_sequences);
    }
    CHECK(mixed > 0);      // prefill chunks shared passes with decode rows
    CHECK(max_seqs > 1);   // and passes were batched
}

TEST_CASE("scheduler: static batching gives the same tokens, and a batch admits no one until it ends") {
    TinyModel m;
    const auto reqs = workload(m, 10, 500, 8);
    const auto want = alone(m, reqs);
    const TrafficRun run =
        run_traffic(*m.backend, *m.codec, reqs, setup(BatchPolicy::static_batching, 3, 64, 4), linear_cost(2, 0.1));
    check_served(run, reqs, want);
    // A request's first scheduling is the start of a batch: the moment the
    // engine was empty. So no request starts while another one runs.
    for (const RequestRecord& a : run.requests)
        for (const RequestRecord& b : run.requests)
            if (a.id != b.id) CHECK_FALSE((b.first_scheduled_ms > a.first_scheduled_ms && b.first_scheduled_ms < a.finish_ms));
}

TEST_CASE("scheduler: a full KV pool preempts requests, which recompute and finish with the same tokens") {
    TinyModel m;
    const auto reqs = workload(m, 10, 1000, 24);
    const auto want = alone(m, reqs);
    // 12 blocks of 8 positions: two or three requests fill it as they grow.
    const TrafficRun run =
        run_traffic(*m.backend, *m.codec, reqs, setup(BatchPolicy::continuous, 6, 12, 8), linear_cost(2, 0.1));
    check_served(run, reqs, want);
    CHECK(run.report.total("preemptions").value > 0);
    int preempted_requests = 0;
    for (const RequestRecord& r : run.requests) {
        preempted_requests += r.n_preemptions > 0;
        if (r.n_preemptions > 0)
            CHECK(std::any_of(r.spans.begin(), r.spans.end(), [](const PhaseSpan& s) { return s.phase == Phase::preempted; }));
    }
    CHECK(preempted_requests > 0);
    MESSAGE(run.report.total("preemptions").value << " preemptions of " << preempted_requests << " requests");
}

TEST_CASE("scheduler: the prefix cache changes no output and computes fewer prefill tokens") {
    TinyModel m;
    const auto reqs = workload(m, 10, 100, 6, /*shared_prefix=*/24);
    const auto want = alone(m, reqs);
    TrafficParams p = setup(BatchPolicy::continuous, 4, 64, 4);
    const TrafficRun off = run_traffic(*m.backend, *m.codec, reqs, p, linear_cost(2, 0.1));
    p.scheduler.prefix_cache = true;
    const TrafficRun on = run_traffic(*m.backend, *m.codec, reqs, p, linear_cost(2, 0.1));
    check_served(off, reqs, want);
    check_served(on, reqs, want);
    const double computed_off = off.report.total("prefill_computed").value;
    const double computed_on = on.report.total("prefill_computed").value;
    CHECK(off.report.total("prefix_cached").value == 0);
    CHECK(on.report.total("prefix_cached").value >= 24 * 8);  // all but the first requests skip the 24-token prefix
    CHECK(computed_on == computed_off - on.report.total("prefix_cached").value);
    // The hit rate counts against every prompt token, cached or computed.
    CHECK(on.report.total("prefix_hit_rate").value ==
          doctest::Approx(100 * on.report.total("prefix_cached").value / on.report.total("prompt_tokens").value));
    // With the same cost model, skipping work shortens TTFT of those sharing it.
    CHECK(on.report.latency("ttft_shared_prefix").summary.mean < off.report.latency("ttft_shared_prefix").summary.mean);
}

TEST_CASE("scheduler: continuous batching beats static batching on p50 TTFT under the same arrivals") {
    // Structural, not timed: both runs use the same deterministic step cost.
    TinyModel m;
    const auto reqs = workload(m, 24, 40, 24);
    const TrafficRun st =
        run_traffic(*m.backend, *m.codec, reqs, setup(BatchPolicy::static_batching, 4, 128, 4), linear_cost(5, 0.2));
    const TrafficRun ct =
        run_traffic(*m.backend, *m.codec, reqs, setup(BatchPolicy::continuous, 4, 128, 4), linear_cost(5, 0.2));
    const double p50_static = st.report.latency("ttft").summary.p50;
    const double p50_cont = ct.report.latency("ttft").summary.p50;
    MESSAGE("p50 TTFT static " << p50_static << " ms, continuous " << p50_cont << " ms");
    CHECK(p50_cont < p50_static);
    CHECK(ct.report.total("batch_occupancy").value > st.report.total("batch_occupancy").value);
}

TEST_CASE("scheduler: 10,000 random arrivals and departures leak no block, lose no request") {
    TinyModel m;
    EchoBackend echo(m.model);
    const int n_vocab = m.model->hparams().n_vocab;
    const int bs = 4, n_blocks = 40;
    auto kv = sixstep::test::make_pool(echo, n_blocks, bs);
    std::mt19937 rng(11);
    // Prompts: a quarter start with one of three shared heads (prefix hits),
    // lengths 1..40; outputs 1..20; arrivals bursty.
    std::vector<std::vector<int>> heads(3);
    for (auto& h : heads)
        for (int i = 0; i < 12; ++i) h.push_back(static_cast<int>(rng() % 256));
    std::vector<RequestSpec> reqs;
    double t = 0;
    for (int i = 0; i < 10000; ++i) {
        RequestSpec r;
        r.id = i;
        t += (rng() % 4 == 0) ? static_cast<double>(rng() % 200) : 0.0;
        r.arrival_ms = t;
        if (rng() % 4 == 0) r.prompt = heads[rng() % 3];
        const int own = 1 + static_cast<int>(rng() % 28);
        for (int k = 0; k < own; ++k) r.prompt.push_back(static_cast<int>(rng() % 256));
        r.max_tokens = 1 + static_cast<int>(rng() % 20);
        reqs.push_back(r);
    }
    SchedulerParams sp;
    sp.max_batch = 8;
    sp.max_step_tokens = 32;
    sp.prefix_cache = true;
    sp.stop_at_eog = false;
    {
        Scheduler s(echo, *kv, *m.codec, sp, linear_cost(1, 0.05));
        s.submit(reqs);
        const sixstep::llm::KvBlocks& blocks = kv->blocks();
        long long steps = 0;
        while (s.step()) {
            // Every reference is a running request's table entry or the cache's.
            long long refs = 0, owned = 0;
            for (int b = 0; b < n_blocks; ++b) refs += blocks.ref_count(b);
            const KvSnapshot snap = s.kv_snapshot();
            for (const KvTableView& tv : snap.tables) owned += static_cast<long long>(tv.blocks.size());
            REQUIRE(refs == owned + s.prefix_cache()->size());
            REQUIRE(blocks.n_free() + snap.n_used() == n_blocks);
            REQUIRE(s.n_running() <= sp.max_batch);
            REQUIRE(s.steps().back().n_slots_filled <= s.steps().back().n_slots_held);
            ++steps;
        }
        const auto& recs = s.requests();
        REQUIRE(recs.size() == reqs.size());
        int wrong = 0, unfinished = 0;
        for (std::size_t i = 0; i < recs.size(); ++i) {
            unfinished += !recs[i].finished();
            wrong += recs[i].output != sixstep::test::echo_alone(reqs[i].prompt, reqs[i].max_tokens, n_vocab);
        }
        CHECK(unfinished == 0);
        CHECK(wrong == 0);
        const TrafficReport rep = make_report(recs, s.steps(), s.run_info(), {});
        CHECK(rep.total("preemptions").value > 0);    // the pool was tight…
        CHECK(rep.total("prefix_cached").value > 0);  // …and the heads were shared
        MESSAGE(steps << " steps, " << rep.total("preemptions").value << " preemptions, "
                      << rep.total("prefix_cached").value << " prompt tokens from the cache");
        CHECK(s.prefix_cache()->size() > 0);  // the cache still holds blocks until the scheduler goes
    }
    // The scheduler gone, every reference is gone with it.
    const sixstep::llm::KvBlocks& blocks = kv->blocks();
    for (int b = 0; b < n_blocks; ++b) CHECK(blocks.ref_count(b) == 0);
    CHECK(blocks.n_free() == n_blocks);
    std::vector<int> free = blocks.free_list();
    std::sort(free.begin(), free.end());
    CHECK(std::adjacent_find(free.begin(), free.end()) == free.end());  // no block twice on the free list
    CHECK(blocks.sequences().empty());
}

TEST_CASE("scheduler: the KV snapshot shows owners, shared prefix blocks and the free list") {
    sixstep::test::EchoScheduler e(16, 4, 4, linear_cost(1, 0), /*prefix_cache=*/true);
    Scheduler& s = e.s;
    const std::vector<int> head = {5, 6, 7, 8, 9, 10, 11, 12};  // two full blocks
    std::vector<int> a = head, b = head;
    a.push_back(1);
    b.push_back(2);
    s.submit({request(0, 0, a, 8),
              request(1, 5, b, 8)});
    // Request 0 reads its prompt in the first pass (0..1 ms) and its two full
    // blocks are cached; it decodes until request 1 arrives at 5 ms and adopts them.
    while (s.n_running() < 2) REQUIRE(s.step());
    const KvSnapshot snap = s.kv_snapshot();
    REQUIRE(snap.tables.size() == 2);
    CHECK(snap.tables[0].request == 0);
    CHECK(snap.tables[1].request == 1);
    // The two head blocks are in both tables, and the cache keeps them too.
    for (int i = 0; i < 2; ++i) {
        const int blk = snap.tables[0].blocks[static_cast<std::size_t>(i)];
        CHECK(snap.tables[1].blocks[static_cast<std::size_t>(i)] == blk);
        const KvBlockView& v = snap.blocks[static_cast<std::size_t>(blk)];
        CHECK(v.refs == 3);
        CHECK(v.cached);
        CHECK(v.owners == std::vector<int>{0, 1});
        CHECK(v.filled == 4);
    }
    CHECK(snap.n_shared() >= 2);
    // The step's record counted the pool the same way, without the view.
    const StepRecord& last = s.steps().back();
    CHECK(last.n_blocks_used == snap.n_used());
    CHECK(last.n_blocks_cached == snap.n_cached_only());
    CHECK(last.n_slots_filled == snap.n_filled());
    CHECK(last.n_slots_held == snap.n_held());
    CHECK(static_cast<int>(snap.free_list.size()) + snap.n_used() == 16);
    CHECK(s.requests()[1].n_cached_tokens == 8);
}

TEST_CASE("scheduler: bad setups and requests that could never run give one clear error") {
    TinyModel m(64);
    EchoBackend echo(m.model);
    auto kv = sixstep::test::make_pool(echo, 8, 4);
    SchedulerParams sp;
    sp.max_batch = 9;
    CHECK(error_of([&] { Scheduler s(echo, *kv, *m.codec, sp); }) ==
          "max batch 9 is beyond the KV capacity: 8 blocks of 4 positions hold at most 8 requests at once (one block "
          "each); lower max_batch or raise kv_blocks (--max-batch, --kv-blocks on the command line)");
    sp.max_batch = 0;
    CHECK(error_of([&] { Scheduler s(echo, *kv, *m.codec, sp); }) == "max batch 0: run at least one request at a time");
    sp.max_batch = 2;
    sp.max_step_tokens = 0;
    CHECK(error_of([&] { Scheduler s(echo, *kv, *m.codec, sp); }) ==
          "max step tokens 0: a forward pass must read at least one token");
    sp.max_step_tokens = 16;
    sp.prefix_cache = true;
    sp.kv_layout = KvLayout::contiguous;
    CHECK(error_of([&] { Scheduler s(echo, *kv, *m.codec, sp); }) ==
          "prefix caching shares blocks between requests: it needs the paged KV layout, not contiguous");
    sp.prefix_cache = false;
    sp.kv_layout = KvLayout::paged;

    Scheduler s(echo, *kv, *m.codec, sp);
    // 8 blocks of 4 = 32 positions: 20 + 20 − 1 = 39 would never fit.
    CHECK(error_of([&] { s.submit({request(3, 0, std::vector<int>(20, 7), 20, "t.txt:4")}); }) ==
          "t.txt:4: request 3: needs up to 10 KV blocks of 4 positions (prompt 20 + 20 new tokens) but the pool holds 8: "
          "it could never finish; raise kv_blocks or lower max_tokens (--kv-blocks, --max-tokens on the command line)");
    CHECK(error_of([&] { s.submit({request(1, 0, std::vector<int>(60, 7), 10)}); }) ==
          "request 1: prompt (60 tokens) + n (10) does not fit in the context of 64 tokens (n_ctx); ask for at most 5 "
          "tokens (the last one is never fed back, so it needs no place)");
    // 3 + 2147483647 − 1 wrapped negative in int: the request was let in, and
    // when its cache filled the whole step failed, every request with it.
    // Its bound is its own prompt's; a longer prompt among the rest needs a
    // smaller one, and the message gives the bound that fits them all.
    CHECK(error_of([&] {
        s.submit({request(1, 0, {1, 2}, 64), request(2, 0, std::vector<int>(10, 7), 2), request(3, 0, {4}, 1)});
    }) == "request 1: prompt (2 tokens) + n (64) does not fit in the context of 64 tokens (n_ctx); ask for at most 63 "
          "tokens (the last one is never fed back, so it needs no place); for all 3 requests, at most 55 (request 2 "
          "has the longest prompt, 10 tokens)");
    CHECK(error_of([&] { s.submit({request(1, 0, {1, 2, 3}, 2147483647)}); }) ==
          "request 1: prompt (3 tokens) + n (2147483647) does not fit in the context of 64 tokens (n_ctx); ask for at "
          "most 62 tokens (the last one is never fed back, so it needs no place)");
    CHECK(error_of([&] { s.submit({request(1, 0, {1}, 1), request(1, 0, {2}, 1)}); }) ==
          "request 1: the id is used twice");
    CHECK(error_of([&] { s.submit({request(2, -1, {1}, 1)}); }) ==
          "request 2: arrival time -1 ms must be a number >= 0");
    CHECK(error_of([&] { s.submit({request(2, 0, {100000}, 1)}); }) ==
          "request 2: token id 100000 is outside the vocabulary (0..511)");
    CHECK(s.requests().empty());  // nothing was half-added
    CHECK_FALSE(s.step());        // and there is nothing to run
}

TEST_CASE("scheduler: cancel frees a request's blocks wherever it is, the others finish with their tokens alone") {
    TinyModel m;
    auto reqs = workload(m, 8, 1000, 12);
    const auto want = alone(m, reqs);
    TrafficParams p = setup(BatchPolicy::continuous, 3, 64, 4);
    sixstep::llm::KvCacheParams kp = sixstep::llm::kv_cache_params(m.backend->model().hparams(), 0, 1, p.block_size);
    kp.n_blocks = p.kv_blocks;
    auto kv = m.backend->make_kv_cache(kp);
    Scheduler s(*m.backend, *kv, *m.codec, p.scheduler, linear_cost(2, 0.1));
    std::map<int, std::string> text;
    std::vector<int> finished;
    s.set_observer({[&](int id, const sixstep::llm::TokenEvent& e) { text[id] += e.text; },
                    [&](const RequestRecord& r) { finished.push_back(r.id); }});
    s.submit(reqs);
    // Run until three are running and some wait, then cancel one running and one waiting.
    while (s.n_running() < 3 || s.n_waiting() == 0) REQUIRE(s.step());
    const int running = s.requests()[0].id;
    REQUIRE(s.requests()[0].first_scheduled_ms >= 0);
    const int waiting = reqs.back().id;
    const int used_before = kv->blocks().n_used();
    CHECK(s.cancel(running));
    CHECK(kv->blocks().n_used() < used_before);  // its blocks went back at once
    CHECK(s.cancel(waiting));
    CHECK_FALSE(s.cancel(running));  // already finished
    CHECK_FALSE(s.cancel(999));      // unknown
    s.run();
    CHECK(kv->blocks().n_used() == 0);
    CHECK(finished.size() == reqs.size());
    const std::vector<RequestRecord> done = s.take_finished();
    CHECK(done.size() == reqs.size());
    CHECK(s.requests().empty());
    CHECK(s.steps().empty());
    for (const RequestRecord& r : done) {
        INFO("request " << r.id);
        if (r.id == running || r.id == waiting) {
            CHECK(r.stop_reason == sixstep::llm::StopReason::cancelled);
            CHECK(r.output.size() < want.at(r.id).size());
        } else {
            CHECK(r.output == want.at(r.id));
            // What the observer heard is the text of exactly these tokens.
            auto st = m.codec->stream();
            std::string t;
            for (int tok : r.output) t += st->push(tok);
            CHECK(text[r.id] == t + st->flush());
        }
    }
    // The scheduler keeps working after forgetting: new ids, fresh records.
    std::vector<RequestSpec> more = {reqs[1]};
    more[0].id = 100;
    more[0].arrival_ms = s.clock().now_ms();
    s.submit(more);
    s.run();
    REQUIRE(s.requests().size() == 1);
    CHECK(s.requests()[0].output == want.at(reqs[1].id));
}

// A request preempted to make room goes back to the head of the queue: it
// was admitted before anyone now waiting, and a later arrival must not
// overtake it. Six blocks of four positions, two running at most: A (8
// prompt tokens) and B (4) grow until the pool runs out; C arrives at 1 ms.
TEST_CASE("scheduler: a preempted request is readmitted before a later arrival") {
    sixstep::test::EchoScheduler e(6, 4, 2, linear_cost(10, 0));
    Scheduler& s = e.s;
    s.submit({request(0, 0, {1, 2, 3, 4, 5, 6, 7, 8}, 9), request(1, 0, {9, 10, 11, 12}, 9), request(2, 1, {13, 14}, 2)});
    s.run();
    const auto& r = s.requests();
    REQUIRE(r.size() == 3);
    int preempted = 0;
    for (int i = 0; i < 2; ++i) {
        if (r[i].n_preemptions == 0) continue;
        ++preempted;
        for (const PhaseSpan& span : r[i].spans)
            if (span.phase == Phase::preempted) {
                CAPTURE(i);
                CHECK(span.t1_ms <= r[2].first_scheduled_ms);  // back in before C's first pass
            }
    }
    CHECK(preempted > 0);
    for (const RequestRecord& q : r) CHECK(q.finished());
}

// A prompt cached whole (its length a multiple of the block size, sent a
// second time) still reads its last token: the logits come from a pass.
TEST_CASE("scheduler: a prompt found whole in the prefix cache reads its last block again, for the logits") {
    sixstep::test::EchoScheduler e(32, 4, 4, linear_cost(10, 0), /*prefix_cache=*/true);
    Scheduler& s = e.s;
    s.submit({request(0, 0, {1, 2, 3, 4, 5, 6, 7, 8}, 3), request(1, 1000, {1, 2, 3, 4, 5, 6, 7, 8}, 3)});
    s.run();
    const auto& r = s.requests();
    REQUIRE(r.size() == 2);
    CHECK(r[1].finished());
    CHECK(r[1].output == r[0].output);
    CHECK(r[1].n_cached_tokens == 4);  // the first block; the second is read again
}

// Keys here are typed by hand: a collision of the real 64-bit hash cannot be
// found, but the cache must hold even when one happens.
TEST_CASE("prefix cache: every full block gets a key, and a match checks the tokens and the parent behind a key") {
    std::vector<std::uint64_t> keys;
    extend_block_hashes(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}, 4, keys);
    CHECK(keys.size() == 2);  // exactly two blocks: both full
    extend_block_hashes(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}, 4, keys);
    CHECK(keys.size() == 2);  // the third is not full yet

    sixstep::llm::KvBlocks b({.n_ctx = 64, .block_size = 4, .n_blocks = 8});
    std::vector<sixstep::llm::BlockCopy> copies;
    const auto filled = [&] {
        const int seq = b.add_sequence();
        b.reserve(seq, 0, 8, copies);
        b.commit(seq, 8);
        return seq;
    };
    const int x = filled(), y = filled();
    PrefixCache cache(b);
    // x = [1 2 3 4 | 9 9 9 9] keyed {11, 33}; y = [5 6 7 8 | 9 9 9 9] keyed
    // {22, 33}: its second key collides with x's, under another parent.
    const std::vector<int> xt{1, 2, 3, 4, 9, 9, 9, 9}, yt{5, 6, 7, 8, 9, 9, 9, 9};
    const std::vector<std::uint64_t> xk{11, 33}, yk{22, 33};
    cache.insert(xt, xk, b.block_table(x), 2);
    cache.insert(yt, yk, b.block_table(y), 2);  // 33 is taken: y's second block is not cached
    CHECK(cache.size() == 3);
    CHECK(cache.match(xt, xk, 2) == b.block_table(x));
    // y's first block matches; behind 33 is x's block, whose parent is 11, not 22.
    CHECK(cache.match(yt, yk, 2) == std::vector<int>{b.block_table(y)[0]});
    // Under x's keys, other tokens in the second block: the first block only.
    CHECK(cache.match(std::vector<int>{1, 2, 3, 4, 9, 9, 9, 8}, xk, 2) == std::vector<int>{b.block_table(x)[0]});
    CHECK(cache.match(xt, xk, 1) == std::vector<int>{b.block_table(x)[0]});
}

TEST_CASE("traffic side by side: each arm serves as it does alone, and the arms' passes take turns") {
    TinyModel m;
    const auto reqs = workload(m, 12, 200, 10);
    const TrafficParams arms[] = {setup(BatchPolicy::continuous, 4, 64, 4, 5), setup(BatchPolicy::static_batching, 3, 64, 4)};
    const std::vector<TrafficRun> both = run_traffic_side_by_side(*m.backend, *m.codec, reqs, arms, linear_cost(2, 0.1));
    REQUIRE(both.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        // Two pools, two schedulers: neither arm's tokens, passes or clock
        // depend on the other's.
        const TrafficRun apart = run_traffic(*m.backend, *m.codec, reqs, arms[i], linear_cost(2, 0.1));
        CHECK(both[i].steps.size() == apart.steps.size());
        CHECK(both[i].info.duration_ms == doctest::Approx(apart.info.duration_ms));
        REQUIRE(both[i].requests.size() == apart.requests.size());
        for (std::size_t r = 0; r < apart.requests.size(); ++r)
            CHECK(both[i].requests[r].output == apart.requests[r].output);
    }
    CHECK(both[0].report.total("batch_occupancy").value != both[1].report.total("batch_occupancy").value);

    // The same setup twice, every request waiting at the start (so the
    // passes do not depend on their costs), and a clock whose n-th pass
    // costs n ms: taking turns, the first arm's passes cost 1, 3, 5, … and
    // the second's 2, 4, 6, …, a millisecond more each; one after the
    // other, the second would pay N more for each of its N passes.
    std::vector<RequestSpec> at_once;
    for (int i = 0; i < 8; ++i) at_once.push_back(request(i, 0, std::vector<int>(5, 3 + i), 6));
    const TrafficParams twice[] = {setup(BatchPolicy::continuous, 3, 64, 4), setup(BatchPolicy::continuous, 3, 64, 4)};
    int calls = 0;
    const std::vector<TrafficRun> turns = run_traffic_side_by_side(
        *m.backend, *m.codec, at_once, twice, [&calls](const StepShape&) { return static_cast<double>(++calls); });
    const std::size_t n = turns[0].steps.size();
    REQUIRE(turns[1].steps.size() == n);
    CHECK(calls == static_cast<int>(2 * n));
    CHECK(turns[1].info.duration_ms - turns[0].info.duration_ms == doctest::Approx(static_cast<double>(n)));
}
