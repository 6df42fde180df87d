// The Pipeline with a tiny fake model: stage order, stepping, looping back,
// timing, the weights checksum, errors.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "pipeline/core/error.h"
#include "pipeline/core/pipeline.h"

using namespace sixstep;

namespace {

// Counts down: postprocess loops back to forward `loops` times, like an LLM
// generating `loops + 1` tokens. It can be told to corrupt its weights.
struct CountdownModel : Model {
    int loops = 0;
    bool tamper = false;
    bool is_loaded = false;
    int loads = 0;
    std::vector<float> weights{1.f, 2.f, 3.f};

    struct CountdownJob : Job {
        CountdownModel& m;
        int left;
        explicit CountdownJob(CountdownModel& model) : m(model), left(model.loops) {}
        void normalize(TraceEvent& ev) override { ev.out("x", 1.0); }
        void forward(TraceEvent& ev) override {
            if (m.tamper) m.weights[0] += 1;
            ev.out("left", static_cast<double>(left));
        }
        void output(TraceEvent&) override {}
        bool postprocess(TraceEvent&) override { return left-- > 0; }
        Response respond(TraceEvent& ev) override {
            ev.out("text", std::string("done"));
            return {"done", {}};
        }
    };

    std::string name() const override { return "countdown"; }
    bool loaded() const override { return is_loaded; }
    void load(TraceEvent& ev) override {
        ev.out("cold", std::string(is_loaded ? "no" : "yes"));
        is_loaded = true;
        ++loads;
    }
    mutable int hashes = 0;  // how often every weight byte was read
    std::uint64_t weights_checksum() const override {
        ++hashes;
        return checksum_bytes(weights.data(), weights.size() * sizeof(float));
    }
    std::unique_ptr<Job> start(const Request&) override { return std::make_unique<CountdownJob>(*this); }
    const ModelDescription& description() const override {
        static const ModelDescription d{"countdown", "a test model without settings", {}, {}, {}, {}, {}, {}, {}, {}};
        return d;
    }
};

std::vector<Stage> stages_of(const Trace& t) {
    std::vector<Stage> out;
    for (const auto& ev : t.events()) out.push_back(ev.stage);
    return out;
}

}  // namespace

TEST_CASE("a single-pass model runs the six stages in order") {
    CountdownModel m;
    Pipeline p(m, {});
    CHECK(p.next_stage() == Stage::request);
    CHECK(p.step().stage == Stage::request);
    CHECK(p.next_stage() == Stage::load);
    p.run();
    CHECK(p.done());
    CHECK(stages_of(p.trace()) == std::vector<Stage>(all_stages.begin(), all_stages.end()));
    CHECK(p.response()->text == "done");
    for (const auto& ev : p.trace().events()) CHECK(ev.elapsed_ms >= 0);
}

TEST_CASE("postprocess can loop back to forward, counting iterations") {
    CountdownModel m;
    m.loops = 2;
    Pipeline p(m, {});
    p.run();
    const std::vector<Stage> expected = {Stage::request, Stage::load,   Stage::forward,     Stage::output,
                                         Stage::postprocess, Stage::forward, Stage::output, Stage::postprocess,
                                         Stage::forward, Stage::output, Stage::postprocess, Stage::respond};
    CHECK(stages_of(p.trace()) == expected);
    CHECK(p.iteration() == 2);
    CHECK(p.trace().events()[5].iteration == 1);
    // lookup finds the latest event of a stage
    CHECK(std::get<double>(*p.trace().lookup("forward.left")) == 0);
}

TEST_CASE("run_through stops after the named stage") {
    CountdownModel m;
    Pipeline p(m, {});
    p.run_through(Stage::forward);
    CHECK(p.trace().events().back().stage == Stage::forward);
    CHECK(p.next_stage() == Stage::output);
    CHECK(!p.done());
}

TEST_CASE("the model is loaded once and reused by later requests") {
    CountdownModel m;
    Pipeline(m, {}).run();
    Pipeline second(m, {});
    second.run();
    CHECK(m.loads == 2);  // load() is called each time ...
    CHECK(std::get<std::string>(*second.trace().lookup("load.cold")) == "no");  // ... but reuses
}

TEST_CASE("respond proves the weights were not written — and notices when they were") {
    CountdownModel honest;
    Pipeline a(honest, {});
    a.run();
    CHECK(std::get<std::string>(*a.trace().lookup("respond.weights_unchanged")) == "yes");
    CHECK(*a.trace().lookup("respond.weights_checksum") == *a.trace().lookup("load.weights_checksum"));

    CountdownModel cheat;
    cheat.tamper = true;
    Pipeline b(cheat, {});
    b.run();
    CHECK(std::get<std::string>(*b.trace().lookup("respond.weights_unchanged")) == "no");
}

TEST_CASE("a finished or failed pipeline refuses to run more") {
    CountdownModel m;
    Pipeline p(m, {});
    p.run();
    CHECK_THROWS_WITH_AS(p.step(), "the request is already answered; start a new one", Error);

    struct FailingModel : CountdownModel {
        std::unique_ptr<Job> start(const Request&) override {
            struct J : CountdownJob {
                using CountdownJob::CountdownJob;
                void normalize(TraceEvent&) override { throw Error("bad input"); }
            };
            return std::make_unique<J>(*this);
        }
    } f;
    Pipeline q(f, {});
    CHECK_THROWS_WITH_AS(q.step(), "bad input", Error);
    CHECK(q.failed());
    CHECK(q.trace().empty());
    CHECK_THROWS_WITH_AS(q.step(), "the request already failed; start a new one", Error);
}

TEST_CASE("the observer sees every event as it happens") {
    CountdownModel m;
    std::vector<Stage> seen;
    Pipeline p(m, {}, [&](const TraceEvent& ev) { seen.push_back(ev.stage); });
    p.run_through(Stage::output);
    CHECK(seen == std::vector<Stage>{Stage::request, Stage::load, Stage::forward, Stage::output});
}

TEST_CASE("a reused model does no per-weight work at load, and the proof is timed on its own") {
    CountdownModel m;
    Pipeline first(m, {});
    first.run();
    CHECK(m.hashes == 2);  // once at the cold load, once to prove the weights unchanged
    Pipeline second(m, {});
    second.run_through(Stage::load);
    CHECK(m.hashes == 2);  // warm: the checksum as loaded is remembered
    const TraceEvent& load = second.trace().events().back();
    CHECK(std::get<std::string>(load.find("weights_checksum")->value) == checksum_hex(m.checksum_as_loaded()));
    CHECK(std::get<double>(load.find("checksum_ms")->value) >= 0);
    second.run();
    CHECK(m.hashes == 3);  // the proof after this request
    const TraceEvent& respond = second.trace().events().back();
    CHECK(std::get<std::string>(respond.find("weights_unchanged")->value) == "yes");
    CHECK(respond.find("checksum_ms") != nullptr);
}

TEST_CASE("time spent on another stage's work is left out of a stage's time") {
    struct SlowOpen : CountdownModel {
        struct Job : CountdownJob {
            using CountdownJob::CountdownJob;
            void normalize(TraceEvent& ev) override {
                const auto t0 = std::chrono::steady_clock::now();
                std::this_thread::sleep_for(std::chrono::milliseconds(200));  // "opening the file"
                ev.other_stage_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            }
        };
        std::unique_ptr<sixstep::Job> start(const Request&) override { return std::make_unique<Job>(*this); }
    } m;
    Pipeline p(m, {});
    const TraceEvent& ev = p.step();
    CHECK(ev.other_stage_ms >= 200);
    CHECK(ev.elapsed_ms < 100);
}

TEST_CASE("a model without settings refuses every setting by name, and answers no properties") {
    CountdownModel m;
    CHECK_THROWS_WITH_AS(m.apply_setting("loops", "3"), "unknown setting \"loops\": the countdown model has no settings",
                         Error);
    CHECK_THROWS_AS((void)m.setting("loops"), Error);
    CHECK(!m.property("bias"));
}
