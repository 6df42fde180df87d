#include "app/core/progress_board.h"

namespace sixstep::app {

void ProgressBoard::progress(std::string_view task, std::uint64_t done, std::uint64_t total) {
    std::lock_guard lock(mutex_);
    // assign() reuses the string's storage: no allocation while the task stays the same.
    if (latest_.task != task) latest_.task.assign(task);
    latest_.done = done;
    latest_.total = total;
}

void ProgressBoard::clear() {
    std::lock_guard lock(mutex_);
    latest_ = ProgressReport{};
}

ProgressReport ProgressBoard::latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
}

}  // namespace sixstep::app
