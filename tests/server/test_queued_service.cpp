// A one-at-a-time server's service read from completion times: queued
// requests' completions telescope to the pace the server kept, late reads
// cancel, and a light load tells nothing.
#include <doctest/doctest.h>

#include "app/server/queued_service.h"

using namespace sixstep::server;

namespace {

LoadRequest completed(double sent_ms, double done_ms) {
    LoadRequest q;
    q.scheduled_ms = q.sent_ms = sent_ms;
    q.done_ms = done_ms;
    q.ok = true;
    return q;
}

// Ten requests sent 1 ms apart to a server that takes 5 ms each: all but
// the first queue, and they finish at 5, 10, …, 50 ms.
LoadReport ten_queued() {
    LoadReport r;
    for (int i = 0; i < 10; ++i) r.requests.push_back(completed(i, 5.0 * (i + 1)));
    return r;
}

}  // namespace

TEST_CASE("queued service: completions of queued requests come one service apart") {
    LoadReport r = ten_queued();
    // One more, long after, finds the server idle: its time is not a gap.
    r.requests.push_back(completed(200, 213));
    const auto s = queued_service_ms(r);
    REQUIRE(s);
    CHECK(*s == doctest::Approx(5.0));
}

TEST_CASE("queued service: a client that reads late moves completions, not the pace") {
    LoadReport r = ten_queued();
    // Requests 3 to 6 (done at 20, 25, 30, 35) are all read at 36 ms: gaps
    // of 21, 0, 0, 0 and 4 ms in place of five gaps of 5.
    for (int i = 3; i <= 6; ++i) r.requests[static_cast<std::size_t>(i)].done_ms = 36;
    const auto s = queued_service_ms(r);
    REQUIRE(s);
    CHECK(*s == doctest::Approx(5.0));
}

TEST_CASE("queued service: a request that failed ends a run of queued completions") {
    // The sixth request broke off after 5 ms on the server: the gaps on
    // either side of it are not one service each, and are left out.
    LoadReport r = ten_queued();
    r.requests[5].ok = false;
    r.requests[5].done_ms = 28;
    CHECK_FALSE(queued_service_ms(r));  // 7 gaps left, fewer than 8
    const auto s = queued_service_ms(r, 7);
    REQUIRE(s);
    CHECK(*s == doctest::Approx(5.0));
}

TEST_CASE("queued service: a light load, or failed requests, tell nothing") {
    LoadReport r;
    // Four requests, each sent after the one before had finished: none queued.
    for (int i = 0; i < 4; ++i) r.requests.push_back(completed(20.0 * i, 20.0 * i + 5));
    CHECK_FALSE(queued_service_ms(r));
    // Ten that queued, but only the first three came back: two gaps, fewer than 8.
    LoadReport f = ten_queued();
    for (std::size_t i = 3; i < f.requests.size(); ++i) f.requests[i].ok = false;
    CHECK_FALSE(queued_service_ms(f));
    const auto two = queued_service_ms(f, 2);
    REQUIRE(two);
    CHECK(*two == doctest::Approx(5.0));
}
