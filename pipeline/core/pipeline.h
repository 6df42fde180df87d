// Pipeline: walks one request through the six steps, one stage at a time or
// to the end, timing each stage and recording a Trace.
//
//     sixstep::Pipeline p(model, request);
//     p.step();                          // runs "request" only
//     p.run_through(sixstep::Stage::forward);
//     const sixstep::Response& r = p.run();
//
// Errors (sixstep::Error) propagate to the caller; the pipeline is then
// failed() and runs nothing more.
#pragma once
#include <functional>
#include <memory>
#include <optional>

#include "pipeline/core/model.h"
#include "pipeline/core/trace.h"

namespace sixstep {

class Pipeline {
public:
    using Observer = std::function<void(const TraceEvent&)>;

    Pipeline(Model& model, Request request, Observer observer = {});

    bool done() const { return response_.has_value(); }
    bool failed() const { return failed_; }
    Stage next_stage() const { return next_; }
    int iteration() const { return iteration_; }  // LLM: decode step; toy model: 0

    const TraceEvent& step();     // runs exactly one stage
    void run_through(Stage s);    // runs until stage s has run once more (or the end)
    const Response& run();        // runs to the end

    const Trace& trace() const { return trace_; }
    const Request& request() const { return request_; }
    const std::optional<Response>& response() const { return response_; }

private:
    void run_stage(TraceEvent& ev);
    void prove_weights_unchanged(TraceEvent& ev);

    Model& model_;
    Request request_;
    Observer observer_;
    std::unique_ptr<Job> job_;
    Trace trace_;
    std::optional<Response> response_;
    Stage next_ = Stage::request;
    int iteration_ = 0;
    bool failed_ = false;
    std::uint64_t checksum_after_load_ = 0;
};

}  // namespace sixstep
