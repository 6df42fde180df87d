#include "pipeline/serving/serving_model.h"

#include <chrono>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/trace_keys.h"
#include "pipeline/llm/llm_model.h"
#include "pipeline/llm/trace_keys.h"
#include "pipeline/serving/serving_keys.h"
#include "pipeline/serving/serving_lab.h"

namespace sixstep::serving {

namespace {

using Clock = std::chrono::steady_clock;

// One request: the experiment it names runs its four parts in stages 1, 3,
// 4 and 5 (serving_lab.h); load is the language model's, respond says the
// answer the experiment wrote.
class ServingJob : public Job {
public:
    ServingJob(ServingModel& model, Request request) : model_(model), request_(std::move(request)) {}

    void normalize(TraceEvent& ev) override {
        const LabFields fields(request_);
        ex_ = std::make_shared<ServingExhibit>();
        ex_->experiment = fields.text(keys::experiment);
        ev.in(keys::experiment, ex_->experiment);
        const LabEntry& entry = lab_experiment(ex_->experiment);
        if (entry.runs_on_model && !model_.has_llm())
            throw Error(fmt::format("experiment {} runs on the serving model's language model, and it has none: give "
                                    "the lesson's model a GGUF \"file\" (or \"random\"); only canary runs without "
                                    "one",
                                    entry.name));
        lab_ = entry.make();
        lab_->read(fields, ev);
    }

    void forward(TraceEvent& ev) override {
        const auto t0 = Clock::now();
        lab_->run(model_, *ex_, ev);
        ev.out(keys::wall_ms, ms_since(t0), "ms", "real time");
        model_.set_exhibit(ex_);
    }

    void output(TraceEvent& ev) override { lab_->output(*ex_, ev); }

    bool postprocess(TraceEvent& ev) override {
        answer_ = lab_->compare(*ex_, ev);
        return false;
    }

    Response respond(TraceEvent& ev) override {
        ev.summary = "the experiment in words";
        ev.out(sixstep::keys::text, answer_);
        Response r;
        r.text = answer_;
        r.engine_words = true;
        return r;
    }

private:
    ServingModel& model_;
    Request request_;
    std::unique_ptr<LabExperiment> lab_;
    std::shared_ptr<ServingExhibit> ex_;
    std::string answer_;
};

}  // namespace

ServingModel::ServingModel(ServingModelParams params) {
    if (params.file.empty()) return;  // the canary's experiments bring their own models
    llm::LlmModelParams p;
    p.n_threads = params.n_threads;
    p.backend = params.backend;
    llm_ = std::make_unique<llm::LlmModel>(std::move(params.file), p);
}
ServingModel::~ServingModel() = default;

std::string ServingModel::name() const { return llm_ ? "serving: " + llm_->name() : "serving: no model file"; }
bool ServingModel::loaded() const { return !llm_ || llm_->loaded(); }

void ServingModel::load(TraceEvent& ev) {
    if (llm_) return llm_->load(ev);
    // Said, not left blank: step 2 of a lesson whose experiment loads its
    // own versions (the canary's v1 and v2) has no weights of its own.
    ev.summary = "no model file: nothing to load (the experiment brings its own models)";
    ev.out(llm::keys::status, std::string(nothing_to_load));  // no `cold`: nothing was paid, nothing reused
}

std::uint64_t ServingModel::weights_checksum() const { return llm_ ? llm_->weights_checksum() : checksum_bytes(nullptr, 0); }

llm::LlmModel& ServingModel::llm() {
    if (!llm_) throw Error("the serving model has no GGUF file (give the lesson's model a \"file\" or \"random\")");
    return *llm_;
}

std::unique_ptr<Job> ServingModel::start(const Request& request) {
    exhibit_.reset();  // the panels show this request's experiment once it has run
    return std::make_unique<ServingJob>(*this, request);
}

}  // namespace sixstep::serving
