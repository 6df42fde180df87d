// A one-at-a-time server's service time, read from the client's side of a
// load run: while requests queue, the server goes from one to the next
// without idling, so the time between consecutive completions is one
// service. Used by the endpoint lessons to learn the pace the server kept
// during a run, which a busy machine can make slower than when its service
// was timed.
#pragma once
#include <cstddef>
#include <optional>

#include "app/server/load_generator.h"

namespace sixstep::server {

// The mean service over the runs of consecutive completions in which each
// request was sent before the one finishing ahead of it was done (it had
// to queue): each run's span from its first completion to its last, over
// the completions after the first. Late reads by the client (two
// completions timed together, then a long gap) cancel inside a run, and a
// pause of the whole machine counts: it is part of the pace. A request
// that failed ends a run. Nothing when fewer than `min_gaps` completions
// queued (a light load), or when they took no time at all. Only for a
// server that runs one request at a time: one that batches overlaps its
// requests, and their completions come at the pace of arrivals.
std::optional<double> queued_service_ms(const LoadReport& r, std::size_t min_gaps = 8);

}  // namespace sixstep::server
