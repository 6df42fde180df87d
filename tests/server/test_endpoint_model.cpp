// The endpoint model kind: a real server under Poisson load at rates derived
// from its measured service time, the measured curve beside the M/G/1
// prediction. Against a server the test starts on loopback (what an
// instructor's `url:` does) and against the lesson's own server; what it
// emits must be what its description declares; a lesson whose url is
// malformed or answers nothing is invalid, at the url's position. Every
// request has a bounded timeout and the runs are a few hundred milliseconds.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>

#include "description_coverage.h"
#include "error_of.h"
#include "server_fixture.h"
#include "temp_dir.h"

#include "app/core/lesson.h"
#include "app/server/endpoint_model.h"
#include "app/server/load_generator.h"
#include "pipeline/core/pipeline.h"
#include "pipeline/server/endpoint_description.h"

using namespace sixstep;
using namespace sixstep::test;
using server::EndpointExhibit;
using server::EndpointModel;

namespace {

Request sweep_request(const char* utilizations = "0.2,0.7") {
    Request r;
    r.set("utilizations", utilizations);
    r.set("requests", "12");
    r.set("max_tokens", "4");
    r.set("samples", "3");
    return r;
}

const EndpointExhibit& exhibit_of(const EndpointModel& m) {
    const auto* e = dynamic_cast<const EndpointExhibit*>(m.exhibit().get());
    REQUIRE(e != nullptr);
    return *e;
}

double number(const Pipeline& p, const char* path) {
    const auto v = p.trace().lookup(path);
    REQUIRE(v);
    REQUIRE(std::holds_alternative<double>(*v));
    return std::get<double>(*v);
}

std::vector<double> numbers(const Pipeline& p, const char* path) {
    const auto v = p.trace().lookup(path);
    REQUIRE(v);
    REQUIRE(std::holds_alternative<std::vector<double>>(*v));
    return std::get<std::vector<double>>(*v);
}

// A backend whose passes after the first `after` each take `extra` longer:
// a machine that slows the server between the timing of its service and
// the sweep.
class SlowingBackend : public llm::Backend {
public:
    SlowingBackend(llm::Backend& inner, int after, std::chrono::milliseconds extra)
        : inner_(inner), after_(after), extra_(extra) {}
    std::string name() const override { return inner_.name(); }
    const llm::LlamaModel& model() const override { return inner_.model(); }
    void forward(llm::KvCache& kv, const llm::Batch& batch, std::vector<float>& logits,
                 llm::TensorObserver* observer) override {
        inner_.forward(kv, batch, logits, observer);
        if (++passes_ > after_) std::this_thread::sleep_for(extra_);
    }
    std::unique_ptr<llm::KvCache> make_kv_cache(const llm::KvCacheParams& params) const override {
        return inner_.make_kv_cache(params);
    }

private:
    llm::Backend& inner_;
    int after_;
    std::chrono::milliseconds extra_;
    std::atomic<int> passes_{0};
};

// The lesson's own server on one thread, each pass after the first `after`
// taking `extra` longer.
server::EndpointModelParams slowed_own_server(int after, std::chrono::milliseconds extra) {
    server::EndpointModelParams params;
    params.file = bundled_model_file;
    params.n_threads = 1;
    params.wrap_backend = [after, extra](llm::Backend& inner) {
        return std::make_unique<SlowingBackend>(inner, after, extra);
    };
    return params;
}

}  // namespace

TEST_CASE("endpoint model: a server slower in the sweep than when timed — the prediction follows the pace it "
          "kept, and the load at that pace is shown") {
    // The lesson's own server, one request at a time. The timing sends
    // 3 × 4 requests of up to 4 tokens (at most 48 passes); from the 57th
    // pass on each takes 5 ms more, so the slowdown starts after the timing
    // and before the highest rate (the sweep's second 12 requests). 10 ms
    // a pass dwarfs whatever the timing read, even under a sanitizer.
    EndpointModel m(slowed_own_server(56, std::chrono::milliseconds(10)));
    Pipeline p(m, sweep_request());
    p.run();
    REQUIRE_FALSE(p.failed());
    const double timed = number(p, "forward.service_ms");
    const auto services = numbers(p, "output.services_ms"), rates = numbers(p, "output.rates");
    const auto measured = numbers(p, "output.utilizations_measured"), asked = numbers(p, "output.utilizations");
    REQUIRE(services.size() == 2);
    // Four passes of 10 ms more a request: the queued completions at the
    // highest rate came at least 40 ms apart, whatever the timing read.
    CHECK(services[1] > timed + 30);
    CHECK(services[1] > 39);
    CHECK(measured[1] == doctest::Approx(rates[1] * services[1] / 1000));
    CHECK(measured[1] > asked[1]);
    CHECK(number(p, "postprocess.utilization_measured_at_highest") == doctest::Approx(measured[1]));
    // Predicted with the timed service the 70 % queue would barely form (the
    // measured p90 read 42.8× the prediction); at the pace kept, the
    // prediction stays near what was measured.
    const double f = number(p, "postprocess.p90_vs_predicted_at_highest");
    CHECK(f > 0.4);
    CHECK(f < 2.5);
    const std::string answer = std::get<std::string>(*p.trace().lookup("respond.text"));
    CHECK(answer.find("of what it could serve, not 70%") != std::string::npos);
}

TEST_CASE("endpoint model: a sweep that would run for a quarter of an hour is refused before it sends, with why") {
    // A server of 100 ms a request: 100 requests at a load of 1 % span
    // 100 × 100 ms ÷ 0.01 = 1,000 s.
    EndpointModel m(slowed_own_server(0, std::chrono::milliseconds(100)));
    Request r = sweep_request("0.01");
    r.set("requests", "100");
    r.set("max_tokens", "1");
    r.set("samples", "2");
    Pipeline p(m, r);
    const std::string error = error_of([&] { p.run(); });
    CHECK(p.failed());
    CHECK(error.find("the sweep would take about ") == 0);
    // The service as measured: 100 ms and the server's overhead (on a busy
    // machine 200 ms and more, so only its words are held).
    CHECK(error.find("(100 requests at each load, a service of ") != std::string::npos);
    CHECK(error.find("the lowest load 0.01); a lesson's sweep takes at most 15: fewer requests or higher loads") !=
          std::string::npos);
    CHECK_FALSE(p.trace().lookup("forward.sent"));
}

TEST_CASE("endpoint model: one-token answers have no gaps — ITL, TPOT and their growth are undefined, not 0") {
    server::ServingEngineParams one_at_a_time;
    one_at_a_time.scheduler.max_batch = 1;
    TestServer s(one_at_a_time, {});
    Request r = sweep_request();
    r.set("max_tokens", "1");
    server::EndpointModelParams params;
    params.url = s.url();
    EndpointModel m(params);
    Pipeline p(m, r);
    p.run();
    REQUIRE_FALSE(p.failed());
    for (const char* path : {"output.itl_p50_ms", "output.tpot_p50_ms"})
        for (double x : numbers(p, path)) CHECK(std::isnan(x));
    // A lesson's {below: 3} on them fails ("not a finite number"), where a 0 passed.
    CHECK(std::isnan(number(p, "postprocess.tpot_p50_growth")));
    CHECK(std::isnan(number(p, "postprocess.itl_p50_growth")));
}

TEST_CASE("endpoint model: another server by url — rates from the measured service time, every path declared") {
    server::ServingEngineParams one_at_a_time;  // a single server, as the prediction assumes
    one_at_a_time.scheduler.max_batch = 1;
    TestServer s(one_at_a_time, {});
    server::EndpointModelParams params;
    params.url = s.url();
    EndpointModel m(params);
    Pipeline p(m, sweep_request());
    p.run();
    REQUIRE_FALSE(p.failed());
    CHECK(p.trace().lookup("load.own_server") == Value{std::string("no")});
    CHECK(p.trace().lookup("load.served_model") == Value{served_model_id});
    CHECK(number(p, "forward.failed") == 0);
    CHECK(number(p, "forward.sent") == 24);
    const double service = number(p, "forward.service_ms");
    CHECK(service > 0);
    CHECK(number(p, "forward.alone_ttft_ms") > 0);
    // The rates are the loads over the measured service time, not typed in.
    const std::vector<double> u = numbers(p, "output.utilizations"), rates = numbers(p, "output.rates");
    REQUIRE(rates.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) CHECK(rates[i] == doctest::Approx(u[i] * 1000 / service));
    // Every request served: about the rate (a 12-request Poisson run is
    // denser or sparser than its rate), growing with it.
    const auto served = numbers(p, "output.predicted_throughput");
    for (std::size_t i = 0; i < 2; ++i) CHECK((served[i] > rates[i] / 3 && served[i] < rates[i] * 3));
    CHECK(served[1] > served[0]);
    // The prediction: waits grow with the load, and TTFT percentiles are ordered.
    const auto w = numbers(p, "output.predicted_wait_ms");
    CHECK(w[1] > w[0]);
    // Another server may batch: its pace is not read from the run.
    for (const char* path : {"output.services_ms", "output.utilizations_measured"})
        for (double x : numbers(p, path)) CHECK(std::isnan(x));
    for (const char* prefix : {"output.", "output.predicted_"}) {
        const auto p50 = numbers(p, (std::string(prefix) + "ttft_p50_ms").c_str());
        const auto p99 = numbers(p, (std::string(prefix) + "ttft_p99_ms").c_str());
        for (std::size_t i = 0; i < 2; ++i) CHECK(p99[i] >= p50[i]);
    }
    CHECK(number(p, "postprocess.rate_growth") == doctest::Approx(3.5));
    // ITL: the gaps between a request's 4 streamed tokens, at each rate, and their growth.
    const auto itl = numbers(p, "output.itl_p50_ms");
    REQUIRE(itl.size() == 2);
    for (double x : itl) CHECK(x > 0);
    CHECK(number(p, "postprocess.itl_p50_growth") == doctest::Approx(itl[1] / itl[0]));
    // TPOT, the lesson's check: a per-request mean, at each rate, and its
    // growth. Four tokens can all come in one read on a busy machine (TPOT
    // 0), and a growth from nothing is undefined: NaN, which fails any check.
    const auto tpot = numbers(p, "output.tpot_p50_ms");
    REQUIRE(tpot.size() == 2);
    for (double x : tpot) CHECK(x >= 0);
    if (tpot[0] > 0) CHECK(number(p, "postprocess.tpot_p50_growth") == doctest::Approx(tpot[1] / tpot[0]));
    else CHECK(std::isnan(number(p, "postprocess.tpot_p50_growth")));
    CHECK(number(p, "postprocess.worst_p90_factor") >= 1);
    const EndpointExhibit& e = exhibit_of(m);
    CHECK_FALSE(e.own_server);
    CHECK(e.points.size() == 2);
    CHECK(e.points[1].n_sent == 12);

    EmittedPaths seen;
    seen.add(p);
    seen.check_declared(server::endpoint_description());
    // Another server's weights are out of reach: no checksum of nothing (the
    // own server's test below sees them).
    seen.check_all_emitted(server::endpoint_description(),
                           {"load.weights_checksum", "load.checksum_ms", "respond.weights_checksum",
                            "respond.weights_unchanged", "respond.checksum_ms"});
}

TEST_CASE("endpoint model: the lesson's own server runs on an ephemeral loopback port and stops with the model") {
    std::string url;
    {
        server::EndpointModelParams params;
        params.file = bundled_model_file;
        params.n_threads = 1;
        EndpointModel m(params);
        Request r = sweep_request("0.5");
        Pipeline p(m, r);
        p.run();
        REQUIRE_FALSE(p.failed());
        CHECK(p.trace().lookup("load.own_server") == Value{std::string("yes")});
        CHECK(p.trace().lookup("respond.weights_unchanged") == Value{std::string("yes")});
        const auto v = p.trace().lookup("load.url");
        REQUIRE(v);
        url = std::get<std::string>(*v);
        CHECK(url.rfind("http://127.0.0.1:", 0) == 0);
        CHECK(url != "http://127.0.0.1:0");
        CHECK(exhibit_of(m).max_batch == 1);
        CHECK(number(p, "forward.failed") == 0);
        // A second request reuses the server; another max_batch restarts it.
        r.set("max_batch", "2");
        Pipeline q(m, r);
        q.run();
        CHECK(exhibit_of(m).max_batch == 2);
        // A server that batches overlaps its requests: its pace is not read,
        // and the answer says the prediction is a single server's.
        REQUIRE_FALSE(q.failed());
        CHECK(std::get<std::string>(*q.trace().lookup("respond.text")).find("up to 2 requests at once") !=
              std::string::npos);
        CHECK(std::get<std::string>(*p.trace().lookup("respond.text")).find("at once") == std::string::npos);
        for (const char* path : {"output.services_ms", "output.utilizations_measured"})
            for (double x : numbers(q, path)) CHECK(std::isnan(x));
    }
    // Gone with the model: nothing answers there any more.
    CHECK(error_of([&] { (void)server::first_served_model(url); }).find("cannot reach") != std::string::npos);
}

TEST_CASE("endpoint model: a bad url or a server that does not answer makes the lesson invalid, at the url") {
    const auto dir = process_temp_dir("endpoint-lessons");
    auto lesson_with = [&](const std::string& url) {
        const auto path = (dir / "l.yaml").string();
        std::ofstream(path) << "title: t\nmodel:\n  kind: endpoint\n  url: " << url
                            << "\nsteps:\n  - request: {utilizations: \"0.5\"}\n    run: all\n";
        return error_of([&] { (void)app::load_lesson(path); });
    };
    // Named as the lesson wrote it, not as the CLI's --url.
    const std::string bad = lesson_with("ftp://example.org");
    CHECK(bad.find("l.yaml:4:8: url \"ftp://example.org\": use http://HOST:PORT (https is not supported)") !=
          std::string::npos);
    CHECK(bad.find("--url") == std::string::npos);
    const std::string port = lesson_with("http://127.0.0.1:99999");
    CHECK(port.find("l.yaml:4:8: url \"http://127.0.0.1:99999\": the port must be a number from 1 to 65535") !=
          std::string::npos);
    CHECK(lesson_with("\"http://\"").find("l.yaml:4:8: url \"http://\": no host") != std::string::npos);
    // A port nothing listens on: the OS refuses at once.
    const std::string gone = lesson_with("http://127.0.0.1:1");
    CHECK(gone.find("l.yaml:4:8:") != std::string::npos);
    CHECK(gone.find("cannot reach") != std::string::npos);
    // A url beside a file is one or the other.
    const auto path = (dir / "both.yaml").string();
    std::ofstream(path) << "title: t\nmodel:\n  kind: endpoint\n  url: http://127.0.0.1:1\n  file: x.gguf\n"
                           "steps:\n  - run: all\n";
    CHECK(error_of([&] { (void)app::load_lesson(path); }).find("both.yaml:5:9:") != std::string::npos);
    // And url is for the endpoint kind only.
    const auto other = (dir / "other.yaml").string();
    std::ofstream(other) << "title: t\nmodel:\n  kind: serving\n  url: http://127.0.0.1:1\nsteps:\n  - run: all\n";
    CHECK(error_of([&] { (void)app::load_lesson(other); }).find("other.yaml:4:8:") != std::string::npos);
}

TEST_CASE("endpoint url: a megabyte of host, a port past int or out of range is one clear error, never the HTTP client's") {
    using server::parse_server_url;
    CHECK(error_of([] { parse_server_url("http://" + std::string(1 << 20, 'a') + ":80"); }).find("the host must be") !=
          std::string::npos);
    for (const char* port : {"99999999999", "0", "65536", "", "8o80"})
        CHECK(error_of([&] { parse_server_url(std::string("http://127.0.0.1:") + port); }).find("the port must be a number from 1 to 65535") !=
              std::string::npos);
    // The CLI's option by default, a lesson's key when told; a long url shown cut.
    CHECK(error_of([] { parse_server_url("ftp://x"); }) == "--url ftp://x: use http://HOST:PORT (https is not supported)");
    CHECK(error_of([] { parse_server_url("ftp://x", server::UrlGiven::lesson_key); }) ==
          "url \"ftp://x\": use http://HOST:PORT (https is not supported)");
    CHECK(error_of([] { parse_server_url("http://" + std::string(1 << 20, '%')); }).size() < 300);
    CHECK(parse_server_url("http://localhost:8080/v1").origin == "http://localhost:8080");
    CHECK(parse_server_url("http://127.0.0.1").base == "/v1");
}

// Each was "the port must be a number from 1 to 65535".
TEST_CASE("endpoint url: userinfo, a query, a fragment or whitespace is named, not blamed on the port") {
    using server::parse_server_url;
    CHECK(error_of([] { parse_server_url("http://user:pw@127.0.0.1:1"); }) ==
          "--url http://user:pw@127.0.0.1:1: a user name or password (user:pw@) is not supported");
    CHECK(error_of([] { parse_server_url("http://127.0.0.1:1?x=1"); }).find("a query (?...) is not supported") !=
          std::string::npos);
    CHECK(error_of([] { parse_server_url("http://127.0.0.1:1/v1?x=1"); }).find("a query") != std::string::npos);
    CHECK(error_of([] { parse_server_url("http://127.0.0.1:1#f"); }).find("a fragment (#...) is not supported") !=
          std::string::npos);
    for (const char* url : {"http://127.0.0.1:1 ", "http://127.0.0.1 :1", "http://127.0.0.1:1/v1\t"})
        CHECK(error_of([&] { parse_server_url(url); }).find("a URL holds no spaces or control characters") !=
              std::string::npos);
    // An '@' in the path is the path's.
    CHECK(parse_server_url("http://127.0.0.1:1/a@b").base == "/a@b/v1");
}

// `serve --host ::1` prints http://[::1]:PORT; load and a lesson's url
// refused it ("the host must be a name or IPv4 address").
TEST_CASE("endpoint url: an IPv6 address in brackets, as serve prints it") {
    using server::parse_server_url;
    CHECK(parse_server_url("http://[::1]:8080/v1").origin == "http://[::1]:8080");
    CHECK(parse_server_url("http://[::1]").origin == "http://[::1]");
    CHECK(parse_server_url("http://[fe80::1:2]:80").base == "/v1");
    CHECK(error_of([] { parse_server_url("http://[::1:8080"); }).find("closing bracket") != std::string::npos);
    for (const char* bad : {"http://[]:80", "http://[::1]x:80", "http://[::g]:80", "http://::1:80"})
        CHECK_MESSAGE(error_of([&] { parse_server_url(bad); }).find("the host must be") != std::string::npos, bad);
    CHECK(error_of([] { parse_server_url("http://[::1]:0"); }).find("the port must be") != std::string::npos);
}
