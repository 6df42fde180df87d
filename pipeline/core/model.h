// The Model interface that every model in sixstep implements — the toy
// delivery-time regression and the Llama-style transformer alike.
//
// A Model is the weights: loaded once, shared by every request, never written
// by inference. A Job is one request's private state while it walks the six
// steps. The Pipeline (pipeline.h) calls them in order and times each stage:
//
//     TraceEvent ev;                     // (the Pipeline records one per stage)
//     auto job = model.start(request);   // nothing computed yet
//     job->normalize(ev);                // 1 request
//     model.load(ev);                    // 2 load (a no-op "reuse" once loaded)
//     do {
//         job->forward(ev);              // 3 forward
//         job->output(ev);               // 4 output
//     } while (job->postprocess(ev));    // 5 postprocess (true: loop to forward)
//     Response r = job->respond(ev);     // 6 respond
//
// Each model also describes itself (model_description.h): its knobs, the
// paths its trace answers and its headline fields, so front ends never need
// to know which model they drive.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/core/exhibit.h"
#include "pipeline/core/model_description.h"
#include "pipeline/core/trace.h"

namespace sixstep {

// A request as it arrives: named raw fields, still text ("3 km", "0",
// "The cat sat on the"). Normalizing them is stage 1's job.
struct Request {
    std::vector<std::pair<std::string, std::string>> fields;

    const std::string* get(std::string_view key) const;
    void set(std::string key, std::string value);  // replaces an existing key
    void erase(std::string_view key);              // no-op when absent
};

// What goes back to the caller.
struct Response {
    std::string text;           // for people: "Estimated delivery time: 11 minutes"
    std::vector<Field> fields;  // for programs: minutes = 11, …
    // The text is the engine's own English sentence (a serving lab's
    // finding), which a screen shows in the lesson's language through the
    // message catalogue; false: the model's words (a story, or an answer
    // already in the customer's language), shown as they are.
    bool engine_words = false;
};

class Job {
public:
    virtual ~Job() = default;
    virtual void normalize(TraceEvent& ev) = 0;    // 1: parse and normalize the request
    virtual void forward(TraceEvent& ev) = 0;      // 3: forward pass only
    virtual void output(TraceEvent& ev) = 0;       // 4: raw output
    virtual bool postprocess(TraceEvent& ev) = 0;  // 5: true → loop back to forward
    virtual Response respond(TraceEvent& ev) = 0;  // 6: the answer
};

class Model {
public:
    virtual ~Model() = default;
    virtual std::string name() const = 0;
    virtual bool loaded() const = 0;
    // Stage 2. Loads the weights the first time (a cold start, timed); later
    // calls only report that the loaded weights are reused.
    virtual void load(TraceEvent& ev) = 0;
    // A checksum of every weight byte, computed now: equal before and after a
    // request proves that inference never writes the weights.
    virtual std::uint64_t weights_checksum() const = 0;
    // False for a model with no weights of its own (a serving experiment
    // that brings its own): no checksum is shown — a hash of nothing would
    // read as one of weights.
    virtual bool has_weights() const { return true; }
    virtual std::unique_ptr<Job> start(const Request& request) = 0;

    // What this model's kind declares (the same object as its static
    // description in pipeline/models.h).
    virtual const ModelDescription& description() const = 0;
    // Applies a setting the description declares, with a value Knob::check
    // returned; later requests run under it. Throws sixstep::Error for a name
    // that is not one of the kind's settings.
    virtual void apply_setting(std::string_view name, const std::string& value);
    // A setting's current value, as Knob::check would return it ("" = none).
    virtual std::string setting(std::string_view name) const;
    // "model.<key>" values beyond loaded and checksum (delivery: "bias",
    // "w_distance", …); nullopt for a key the model does not answer.
    virtual std::optional<Value> property(std::string_view key) const;
    // What the latest request left for panels beyond its trace (exhibit.h);
    // null when the kind has nothing more to show.
    virtual std::shared_ptr<const Exhibit> exhibit() const { return nullptr; }

    // The checksum of the weights as last loaded: hashed once per load, then
    // remembered, so reusing a loaded model does no per-weight work.
    std::uint64_t checksum_as_loaded() const;

protected:
    // Models call this whenever they load other weights or drop them.
    void weights_changed() { checksum_as_loaded_.reset(); }

private:
    mutable std::optional<std::uint64_t> checksum_as_loaded_;
};

// FNV-1a, 64 bit: small, dependency-free and good enough to notice any change.
std::uint64_t checksum_bytes(const void* data, std::size_t size, std::uint64_t seed = 0xcbf29ce484222325ull);
std::string checksum_hex(std::uint64_t sum);

}  // namespace sixstep
