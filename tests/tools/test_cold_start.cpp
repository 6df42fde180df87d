// Cold start: which request was cold and why, the page cache really dropped
// where mincore can tell, the keep-warm comparison's bookkeeping. Timings are
// measured and reported by the command; no test asserts that cold is slower.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "pipeline/core/error.h"
#include "pipeline/tools/cold_start.h"
#include "pipeline/tools/random_model.h"
#include "temp_dir.h"

using namespace sixstep;
using namespace sixstep::llm;

namespace {

std::filesystem::path tiny_model() {
    const auto path = test::process_temp_dir("cold-start") / "tiny.gguf";
    if (!std::filesystem::exists(path)) write_random_model(path, random_model_preset("tiny"));
    return path;
}

ColdStartParams small_params() {
    ColdStartParams p;
    p.model = tiny_model();
    p.prompt = "cold or warm";
    p.n_predict = 4;
    p.n_warm = 3;
    p.n_threads = 1;
    p.idle_s = {0, 90, 10, 60, 400};
    p.unload_after_s = 60;
    return p;
}

}  // namespace

TEST_CASE("cold start: page-cache residency and dropping, verified with mincore") {
    const auto path = tiny_model();
    const PageCacheResidency res = page_cache_residency(path);
    CHECK(res.known);
    CHECK(res.pages == (std::filesystem::file_size(path) + 4095) / 4096);
    const PageCacheDrop d = drop_page_cache(path);
    CHECK(d.attempted);
    // Where the kernel honours the advice, mincore must confirm it; where it
    // does not, the result must say so rather than claim a drop.
    if (d.verified) {
        CHECK(d.after < 0.01);
        CHECK(page_cache_residency(path).fraction() < 0.01);
        CHECK(d.note.empty());
    } else {
        CHECK(!d.note.empty());
    }
    CHECK_THROWS_AS(drop_page_cache(path.parent_path() / "missing.gguf"), Error);
    CHECK(!page_cache_residency(path.parent_path() / "missing.gguf").known);
}

TEST_CASE("cold start: the first requests are cold, the rest warm, and each label matches what was measured") {
    const ColdStartParams p = small_params();
    const ColdStartResult r = measure_cold_start(p);
    REQUIRE(r.requests.size() == static_cast<std::size_t>(2 + p.n_warm));
    CHECK(r.model == "tiny.gguf");
    CHECK(r.file_bytes == std::filesystem::file_size(p.model));
    CHECK(r.n_params > 0);
    for (std::size_t i = 0; i < r.requests.size(); ++i) {
        const RequestTiming& t = r.requests[i];
        CAPTURE(i);
        CHECK(t.index == static_cast<int>(i));
        if (i < 2) {
            CHECK(t.start != Start::warm);
            CHECK(t.load_ms > 0);  // a cold request builds its instance
        } else {
            CHECK(t.start == Start::warm);
            CHECK(t.load_ms == 0);
        }
        CHECK(t.total_ms >= t.load_ms);
        // One clock: what the caller waited is the load and the request, no
        // part left out (lesson 14's sums came out 0.01-0.07 ms short).
        CHECK(t.load_ms + t.request_ms == doctest::Approx(t.total_ms).epsilon(1e-9));
        CHECK(t.ttft_ms <= t.request_ms);
        CHECK(t.major_faults >= 0);
    }
    // The label is what the page cache held when the request came.
    if (r.drop.verified) {
        CHECK(r.requests[0].start == Start::cold_disk);
        CHECK(r.requests[0].resident_before < 0.01);
        // Reading a mapped file that is not cached is a major fault, at least once.
        CHECK(r.requests[0].major_faults > 0);
    }
    // The first request read the whole file it touched back into the cache.
    CHECK(r.requests[1].start == Start::cold_cached);
    CHECK(r.requests[1].resident_before > 0);
    CHECK(r.warm_median_ms > 0);
    CHECK(r.cold_over_warm == doctest::Approx(r.requests[0].total_ms / r.warm_median_ms));
    // The process's own first request came before them all, on an instance
    // of its own, and is not one of them.
    CHECK(r.process_first.index == -1);
    CHECK(r.process_first.start != Start::warm);
    CHECK(r.process_first.load_ms > 0);
}

TEST_CASE("cold start: keep warm, exactly the requests after a long enough idle gap are cold") {
    const ColdStartParams p = small_params();
    const ColdStartResult r = measure_cold_start(p);
    const KeepWarm& kw = r.keep_warm;
    REQUIRE(kw.rows.size() == p.idle_s.size());
    int n_cold = 0;
    double held = 0, held_warm = 0, total = 0, total_warm = 0;
    for (std::size_t i = 0; i < kw.rows.size(); ++i) {
        const KeepWarmRow& row = kw.rows[i];
        CHECK(row.idle_s == p.idle_s[i]);
        CHECK(row.unloaded == (p.idle_s[i] >= p.unload_after_s));
        n_cold += row.unloaded;
        held += std::min(row.idle_s, p.unload_after_s) + row.scale_to_zero_ms / 1000;
        held_warm += row.idle_s + row.kept_warm_ms / 1000;
        total += row.scale_to_zero_ms, total_warm += row.kept_warm_ms;
    }
    CHECK(n_cold == 3);  // 90, 60 and 400 s against unload after 60 s
    CHECK(kw.n_cold == n_cold);
    CHECK(kw.scale_to_zero_held_s == doctest::Approx(held));
    CHECK(kw.kept_warm_held_s == doctest::Approx(held_warm));
    CHECK(kw.scale_to_zero_held_s < kw.kept_warm_held_s);  // 0+60+10+60+60 < 0+90+10+60+400 seconds
    CHECK(kw.scale_to_zero_total_ms == doctest::Approx(total));
    CHECK(kw.kept_warm_total_ms == doctest::Approx(total_warm));
    CHECK(kw.weight_bytes > 0);
    const auto j = cold_start_json(r);
    CHECK(j["requests"].size() == r.requests.size());
    CHECK(j["keep_warm"]["rows"].size() == p.idle_s.size());
}

TEST_CASE("cold start: bad parameters are refused before anything runs") {
    ColdStartParams p = small_params();
    p.n_predict = 0;
    CHECK_THROWS_AS(measure_cold_start(p), Error);
    p = small_params();
    p.idle_s = {5, NAN};
    CHECK_THROWS_WITH_AS(measure_cold_start(p), "cold start: idle gap nan s: give a finite number of seconds, 0..1e9", Error);
    p = small_params();
    p.unload_after_s = 0;
    CHECK_THROWS_AS(measure_cold_start(p), Error);
    p = small_params();
    p.n_warm = 1000000;
    CHECK_THROWS_AS(measure_cold_start(p), Error);
    p = small_params();
    p.model = p.model.parent_path() / "missing.gguf";
    CHECK_THROWS_AS(measure_cold_start(p), Error);
}

// On a busy machine the load from the page cache can outlast the load from
// disk: "reading the file from disk: -6.60 ms" is noise, not a time.
TEST_CASE("cold start: the disk's share is a time only when the load from disk took longer") {
    ColdStartResult r;
    const auto request = [](Start start, double load_ms) {
        RequestTiming t;
        t.start = start;
        t.load_ms = load_ms;
        return t;
    };
    r.requests = {request(Start::cold_disk, 20.5), request(Start::cold_cached, 12.5), request(Start::warm, 0)};
    REQUIRE(disk_read_ms(r).has_value());
    CHECK(*disk_read_ms(r) == doctest::Approx(8.0));
    CHECK(cold_start_json(r)["disk_read_ms"].get<double>() == doctest::Approx(8.0));

    r.requests[0].load_ms = 5.9;  // 5.9 − 12.5 = −6.6 ms
    CHECK(compares_disk_and_cache(r));
    CHECK(!disk_read_ms(r).has_value());
    CHECK(cold_start_json(r)["disk_read_ms"].is_null());
    r.requests[0].load_ms = 12.5;  // equal: no share to name either
    CHECK(!disk_read_ms(r).has_value());

    // Without a load from disk (--no-drop, or an eviction the kernel refused) there is nothing to subtract.
    r.requests[0] = request(Start::cold_cached, 30);
    CHECK(!compares_disk_and_cache(r));
    CHECK(!disk_read_ms(r).has_value());
    CHECK(cold_start_json(r)["disk_read_ms"].is_null());
}
