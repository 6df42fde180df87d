// Inference vs serving vs deployment, with the delivery-time model.
//
//   inference   one request through the six steps on one version's weights:
//               3 km → 11 minutes (a Pipeline on a DeliveryModel).
//   serving     a stream of requests, each routed to a loaded version and
//               answered; every request is counted, none may be lost.
//   deployment  versions, identified by the checksum of their weights; a new
//               version shipped as a canary to a fraction of the traffic;
//               monitoring that compares it with the old one; rollback.
//
// The story, computed: v1 serves the article's weights (b = 5, w = 2, 10,
// −2). v2 is v1 fine-tuned by gradient descent (delivery/trainer.h) on the
// same deliveries — but its training pipeline logged distance in metres. It
// fits its training data as well as v1 does, yet serving still normalizes
// requests to kilometres: v2 multiplies 3 (km) by a weight meant for metres
// and promises ~5 minutes for every trip. The monitor sees it two ways —
// v2's mean predicted minutes far from v1's, and requests outside v2's own
// training ranges (its distances ran 500–20,000; it is served 0.5–20) — and
// rolls back. With v2_unit = "km" the same pipeline trains a sound v2, the
// canary passes and v2 is promoted.
//
//     CanaryParams p;  p.fraction = 0.1;  p.n_requests = 1000;  p.seed = 7;
//     CanaryResult r = run_canary(p);
//     r.rolled_back, r.rollback_at, r.answered_v1 + r.answered_v2 == r.n_requests
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/delivery/dataset.h"
#include "pipeline/delivery/params.h"

namespace sixstep::serving {

// A deployable version: its weights, their checksum, and what it was trained
// on (the ranges the monitor checks requests and answers against).
struct ModelVersion {
    std::string name;                                  // "v1", "v2"
    delivery::Params params;
    std::uint64_t checksum = 0;                        // of the weights as loaded (DeliveryModel::weights_checksum)
    std::string trained_on;                            // for people
    std::string distance_unit = "km";                  // the unit its training data measured distance in
    std::array<double, delivery::n_features> train_min{}, train_max{};  // feature ranges of its training data
    double label_min = 0, label_max = 0;               // minutes seen in training
    int train_steps = 0;                               // gradient-descent steps (0: given, not trained here)
    double train_loss = 0;                             // mean squared error on its own training data
};

struct CanaryParams {
    double fraction = 0.1;          // share of traffic v2 gets while it is a canary, [0, 1]
    int n_requests = 1000;          // requests in the stream, 1..1,000,000
    int baseline_requests = 100;    // requests served by v1 alone before the canary ships, 0..n_requests
    std::uint64_t seed = 7;         // the traffic and the routing
    std::string v2_unit = "m";      // distance unit of v2's training data: "m" (the skew) or "km" (a sound v2)
    int train_steps = 500;          // v2's fine-tuning steps from v1, 1..100,000
    int min_samples = 20;           // v2 answers before the monitor judges it, >= 1
    double mean_threshold = 0.25;   // alarm when v2's mean predicted minutes differs from v1's by more than this share, > 0
    double range_threshold = 0.10;  // alarm when v2's share of out-of-range requests exceeds v1's by more than this, > 0
    int promote_after = 50;         // v2 answers without an alarm before it takes all traffic; 0 → never
    int window = 100;               // requests per window of the timeline, >= 1
};

// One request as served.
struct CanaryRequest {
    int index = 0;
    std::string distance;           // as the client sent it: "3.2 km", "3200 m"
    std::array<double, delivery::n_features> features{};  // after normalization (km, ratio, flag)
    int version = 1;                // 1 or 2
    double minutes = 0;             // the answer
    std::vector<std::string> warnings;  // the monitor's out-of-range findings for this request
};

struct CanaryEvent {
    int request = 0;                // the request at which it happened
    std::string what;
};

// Per version, over the whole stream.
struct VersionTally {
    int answered = 0;
    int out_of_range = 0;           // requests with at least one warning
    double mean_minutes = 0;
};

// One window of the timeline.
struct CanaryWindow {
    int first = 0, last = 0;        // request indices, inclusive
    int n_v1 = 0, n_v2 = 0;
    double v1_mean = 0, v2_mean = 0;  // mean predicted minutes (0 when none)
};

struct CanaryResult {
    CanaryParams params;
    ModelVersion v1, v2;
    std::string inference_v1, inference_v2;  // "3 km, 0, 0" through each version: the six steps' answer
    int n_requests = 0;
    int answered_v1 = 0, answered_v2 = 0;
    int lost = 0;                   // n_requests − answered: 0, or serving is broken
    bool alarm = false;
    int alarm_at = -1;              // request index
    std::string alarm_reason;
    bool rolled_back = false;       // v2 withdrawn, v1 serves everything again
    bool promoted = false;          // v2 passed and serves everything
    int decided_at = -1;            // request index of the rollback or the promotion
    int exposed = 0;                // requests v2 answered before it was withdrawn (all of them when promoted)
    VersionTally tally_v1, tally_v2;
    std::vector<CanaryWindow> windows;
    std::vector<CanaryEvent> events;
    std::vector<CanaryRequest> requests;
};

// The article's version.
ModelVersion article_version();
// v1 fine-tuned on `data` with distances converted to `distance_unit` ("km" or "m").
ModelVersion fine_tuned_version(const std::string& name, const ModelVersion& from, std::vector<delivery::Example> data,
                                const std::string& distance_unit, int steps);

// Throws sixstep::Error for out-of-range parameters ("canary fraction 1.5:
// give a share of traffic in [0, 1]").
CanaryResult run_canary(const CanaryParams& params);

nlohmann::ordered_json canary_json(const CanaryResult& r, bool with_requests = false);

}  // namespace sixstep::serving
