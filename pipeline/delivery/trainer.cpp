#include "pipeline/delivery/trainer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/progress.h"

namespace sixstep::delivery {

namespace {
double predict(const Params& p, const Example& e) {
    double y = p.bias;
    for (size_t j = 0; j < e.x.size(); ++j) y += p.w[j] * e.x[j];
    return y;
}
}  // namespace

Trainer::Trainer(std::vector<Example> data, Params start, double learning_rate)
    : data_(std::move(data)), params_(start), learning_rate_(learning_rate) {
    if (data_.empty()) throw Error("training needs at least one example");
    set_learning_rate(learning_rate);
}

void Trainer::switch_data(std::vector<Example> data) {
    if (data.empty()) throw Error("training needs at least one example");
    data_ = std::move(data);
    first_loss_ = -1;  // another loss: divergence is measured from its first step
}

void Trainer::set_learning_rate(double lr) {
    if (!(lr > 0) || !std::isfinite(lr)) throw Error(fmt::format("learning rate must be > 0 (got {})", lr));
    learning_rate_ = lr;
}

double Trainer::loss() const {
    double sum = 0;
    for (const auto& e : data_) {
        const double r = predict(params_, e) - e.minutes;
        sum += r * r;
    }
    return sum / static_cast<double>(data_.size());
}

TrainStep Trainer::step() {
    if (frozen_) throw Error("the weights are frozen: training is over, the model only serves now");
    // Once per step: the training loop's progress line, and where Ctrl+C stops it.
    report_progress("training (steps)", static_cast<std::uint64_t>(steps_), 0);
    TrainStep s;
    s.step = ++steps_;
    s.before = params_;
    const double n = static_cast<double>(data_.size());
    for (size_t i = 0; i < data_.size(); ++i) {
        const Example& e = data_[i];
        const double y_hat = predict(params_, e);    // forward
        const double r = y_hat - e.minutes;          // error
        s.loss += r * r / n;                         // loss
        s.grad[0] += 2 * r / n;                      // backward: ∂L/∂b
        for (size_t j = 0; j < e.x.size(); ++j) s.grad[j + 1] += 2 * r * e.x[j] / n;  // ∂L/∂w_j
        if (i < shown_examples) {
            s.predictions.push_back(y_hat);
            s.labels.push_back(e.minutes);
        }
    }
    params_.bias -= learning_rate_ * s.grad[0];      // update
    for (size_t j = 0; j < params_.w.size(); ++j) params_.w[j] -= learning_rate_ * s.grad[j + 1];
    // Every parameter, and the loss: a huge rate can overflow a weight while
    // the bias stays finite (w = [inf, -inf] trained on without a word).
    bool finite = std::isfinite(params_.bias) && std::isfinite(s.loss);
    for (double w : params_.w) finite = finite && std::isfinite(w);
    if (!finite) {
        params_ = s.before;  // the last good weights stay
        throw Error(fmt::format("training diverged at step {}: the learning rate {} is too large", s.step,
                                learning_rate_));
    }
    if (first_loss_ < 0) first_loss_ = s.loss;
    if (s.loss > diverged_loss_factor * std::max(first_loss_, 1.0)) {
        params_ = s.before;
        throw Error(fmt::format("training diverged at step {}: the learning rate {} is too large (the loss, {:.4g} "
                                "at the first step, reached {:.4g})",
                                s.step, learning_rate_, first_loss_, s.loss));
    }
    s.after = params_;
    return s;
}

}  // namespace sixstep::delivery
