// The delivery-time model: the article's toy linear regression, as a real
// sixstep::Model that walks the six steps.
//
//     time = 5 + 2·distance_km + 10·congestion − 2·express_lane   (minutes)
//     3 km, no congestion, no express lane  →  11 minutes
//
// The weights come from a checkpoint — parameters held in memory (a lesson's
// inline values) or a weights file written by the trainer — and are loaded
// once, in stage 2, then reused by every later request.
#pragma once
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "pipeline/core/model.h"
#include "pipeline/delivery/params.h"

namespace sixstep::delivery {

class DeliveryModel : public sixstep::Model {
public:
    explicit DeliveryModel(Params checkpoint = {});

    // Serve the weights in `path` (written by save_weights) from the next load on.
    void use_weights_file(std::string path);
    // Serve these parameters from the next load on.
    void use_params(Params checkpoint);
    // Forget the loaded weights: the next request pays the cold start again.
    void unload();

    Settings& settings() { return settings_; }
    const Settings& settings() const { return settings_; }
    // Restarts dropout's random stream from settings().seed.
    void reseed();

    // sixstep::Model
    std::string name() const override { return "delivery-time (linear regression)"; }
    bool loaded() const override { return weights_.has_value(); }
    void load(TraceEvent& ev) override;
    std::uint64_t weights_checksum() const override;
    std::unique_ptr<Job> start(const Request& request) override;
    const ModelDescription& description() const override { return describe(); }
    void apply_setting(std::string_view name, const std::string& value) override;
    std::string setting(std::string_view name) const override;
    std::optional<Value> property(std::string_view key) const override;  // bias, w_*, cold_load_ms

    // The kind's knobs, paths and headlines (delivery_description.cpp).
    static const ModelDescription& describe();

    const Params& weights() const;  // the loaded weights; throws when not loaded
    const Params& checkpoint() const { return checkpoint_; }  // what the next cold load reads (in memory)
    const std::string& weights_file() const { return file_; }  // empty when in memory
    double cold_load_ms() const { return cold_load_ms_; }      // of the last cold load

private:
    friend class DeliveryJob;
    Params checkpoint_;
    std::string file_;
    mutable std::optional<Params> file_preview_;  // file_ as read for property() before the load
    std::optional<Params> weights_;
    Settings settings_;
    std::mt19937_64 rng_;
    double cold_load_ms_ = 0;
};

// "Estimated delivery time: 11 minutes" / "预计送达时间：11 分钟".
std::string delivery_text(double minutes, const std::string& lang);

}  // namespace sixstep::delivery
