// Training, to show what inference is not: a forward pass, a loss, gradients
// and an update, repeated thousands of times. Plain full-batch gradient
// descent on the mean squared error — nothing hidden.
//
//     loss      L = (1/N) Σ (ŷᵢ − yᵢ)²
//     gradient  ∂L/∂b = (2/N) Σ (ŷᵢ − yᵢ),   ∂L/∂w_j = (2/N) Σ (ŷᵢ − yᵢ)·x_ij
//     update    θ ← θ − η·∂L/∂θ
//
// Once frozen, the trainer refuses to change the weights again: from then on
// the model only serves.
#pragma once
#include <array>
#include <vector>

#include "pipeline/delivery/dataset.h"
#include "pipeline/delivery/params.h"

namespace sixstep::delivery {

struct TrainStep {
    int step = 0;                        // 1-based
    double loss = 0;                     // before the update
    std::array<double, 4> grad{};        // ∂L/∂(b, w_distance, w_congestion, w_express_lane)
    Params before, after;
    std::vector<double> predictions;     // ŷ for the first few examples, before the update
    std::vector<double> labels;          // y for the same examples
};

class Trainer {
public:
    Trainer(std::vector<Example> data, Params start, double learning_rate);

    TrainStep step();             // one full-batch gradient-descent step
    double loss() const;          // on the current parameters
    const Params& params() const { return params_; }
    int steps_done() const { return steps_; }
    double learning_rate() const { return learning_rate_; }
    void set_learning_rate(double lr);
    const std::vector<Example>& data() const { return data_; }
    // Goes on on other data from where it is: the same weights, rate and step count.
    void switch_data(std::vector<Example> data);

    void freeze() { frozen_ = true; }
    bool frozen() const { return frozen_; }

    static constexpr int shown_examples = 5;  // predictions kept per step, for display
    // Divergence, found before the numbers overflow: a loss above this many
    // times the first step's on the current data (at least 1 min²). Below
    // 2 ÷ the loss's largest curvature, gradient descent on this loss never
    // raises it above the first step's; above, the loss grows geometrically
    // (lr 0.01 on the bundled data: ×1.8 a step, 1.5e80 after 300 steps, an
    // overflow at step 1182). A million (errors a thousand times the first
    // step's) is far from any sound training, and reached in a few dozen
    // steps once the loss grows.
    static constexpr double diverged_loss_factor = 1e6;

private:
    std::vector<Example> data_;
    Params params_;
    double learning_rate_;
    int steps_ = 0;
    double first_loss_ = -1;  // the loss of the first step on data_; -1: none yet
    bool frozen_ = false;
};

}  // namespace sixstep::delivery
