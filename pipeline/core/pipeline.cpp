#include "pipeline/core/pipeline.h"

#include <chrono>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/trace_keys.h"

namespace sixstep {

Pipeline::Pipeline(Model& model, Request request, Observer observer)
    : model_(model), request_(std::move(request)), observer_(std::move(observer)) {}

void Pipeline::run_stage(TraceEvent& ev) {
    switch (next_) {
        case Stage::request:
            job_ = model_.start(request_);
            job_->normalize(ev);
            next_ = Stage::load;
            break;
        case Stage::load:
            model_.load(ev);
            next_ = Stage::forward;
            break;
        case Stage::forward:
            job_->forward(ev);
            next_ = Stage::output;
            break;
        case Stage::output:
            job_->output(ev);
            next_ = Stage::postprocess;
            break;
        case Stage::postprocess:
            if (job_->postprocess(ev)) {
                ++iteration_;
                next_ = Stage::forward;
            } else {
                next_ = Stage::respond;
            }
            break;
        case Stage::respond:
            response_ = job_->respond(ev);
            break;
    }
}

// Inference only reads the weights: prove it. The hash is its own timed item
// (checksum_ms), never part of the stage's time. After load it is the
// checksum as loaded (hashed once per load; a reused model costs nothing);
// after respond every weight byte is hashed again and compared.
void Pipeline::prove_weights_unchanged(TraceEvent& ev) {
    if (!model_.has_weights()) return;
    const auto t0 = std::chrono::steady_clock::now();
    if (ev.stage == Stage::load) {
        checksum_after_load_ = model_.checksum_as_loaded();
        ev.out(keys::weights_checksum, checksum_hex(checksum_after_load_), "", "weights checksum");
    } else {
        const std::uint64_t after = model_.weights_checksum();
        ev.out(keys::weights_checksum, checksum_hex(after), "", "weights checksum");
        ev.out(keys::weights_unchanged, std::string(after == checksum_after_load_ ? "yes" : "no"), "",
               "weights unchanged by inference");
    }
    ev.out(keys::checksum_ms, ms_since(t0), "ms", "checksum time (not part of the stage)");
}

const TraceEvent& Pipeline::step() {
    if (failed_) throw Error("the request already failed; start a new one");
    if (done()) throw Error("the request is already answered; start a new one");
    TraceEvent ev;
    ev.stage = next_;
    ev.iteration = iteration_;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        run_stage(ev);
    } catch (...) {
        failed_ = true;
        throw;
    }
    ev.elapsed_ms = ms_since(t0) - ev.other_stage_ms;
    if (ev.stage == Stage::load || ev.stage == Stage::respond) prove_weights_unchanged(ev);
    trace_.add(std::move(ev));
    if (observer_) observer_(trace_.events().back());
    return trace_.events().back();
}

void Pipeline::run_through(Stage s) {
    while (!done()) {
        if (step().stage == s) return;
    }
}

const Response& Pipeline::run() {
    while (!done()) step();
    return *response_;
}

}  // namespace sixstep
