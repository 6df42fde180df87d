#include "app/server/queued_service.h"

#include <algorithm>
#include <vector>

namespace sixstep::server {

std::optional<double> queued_service_ms(const LoadReport& r, std::size_t min_gaps) {
    // Every request that ended, failed ones too: a request that broke off
    // held the server for a while, so a run of queued completions ends
    // there rather than spanning it.
    std::vector<const LoadRequest*> done;
    for (const LoadRequest& q : r.requests)
        if (q.done_ms >= 0 && q.sent_ms >= 0) done.push_back(&q);
    std::sort(done.begin(), done.end(),
              [](const LoadRequest* a, const LoadRequest* b) { return a->done_ms < b->done_ms; });
    // The gaps of consecutive queued completions telescope: their sum is
    // each run's last completion minus its first.
    double span_ms = 0;
    std::size_t gaps = 0;
    for (std::size_t i = 1; i < done.size(); ++i) {
        const LoadRequest& prev = *done[i - 1];
        const LoadRequest& q = *done[i];
        if (prev.ok && q.ok && q.sent_ms < prev.done_ms) span_ms += q.done_ms - prev.done_ms, ++gaps;
    }
    if (gaps < std::max<std::size_t>(min_gaps, 1) || !(span_ms > 0)) return std::nullopt;
    return span_ms / static_cast<double>(gaps);
}

}  // namespace sixstep::server
