// Arrivals: when requests reach the server, on the virtual clock
// (virtual_clock.h). Two processes, as vLLM's `bench serve` draws them:
//   poisson  gaps between requests are exponential with mean 1/rate — many
//            independent users, each unaware of the others;
//   bursty   gaps are gamma-distributed with shape `burstiness` (< 1) and the
//            same mean 1/rate: most gaps are tiny, a few are long, so requests
//            come in clumps (vLLM's --burstiness; 1 would be Poisson again).
// The first request arrives at 0 (the benchmark starts by sending it), and
// the same seed always gives the same times. A trace file (trace_file.h)
// gives recorded times instead.
//
//     ArrivalParams a{.kind = ArrivalKind::poisson, .rate = 4, .count = 100, .seed = 1};
//     std::vector<double> t = arrival_times_ms(a);   // t[0] = 0, mean gap ≈ 250 ms
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sixstep::serving {

enum class ArrivalKind { poisson, bursty, trace };
std::string_view arrival_kind_name(ArrivalKind kind);  // "poisson", "bursty", "trace"

inline constexpr int max_request_count = 100000;  // more would only fill memory with records

inline constexpr double min_arrival_rate = 1e-6, max_arrival_rate = 1e9;  // requests per second
inline constexpr double min_burstiness = 0.01;                            // the gamma shape, up to 1

struct ArrivalParams {
    ArrivalKind kind = ArrivalKind::poisson;
    double rate = 1;            // mean requests per second of virtual time, > 0
    double burstiness = 0.25;   // bursty: shape of the gamma gaps, min_burstiness to 1; smaller is clumpier
    int count = 100;            // requests, 1 .. max_request_count (a trace: its lines)
    std::uint64_t seed = 1;     // the same seed gives the same arrivals
};

// Throws sixstep::Error with a clear message for a rate <= 0 (or not a
// number), a count outside 1 .. max_request_count, a burstiness outside min_burstiness .. 1.
// A trace's rate and count come from its file: nothing to check here.
void check_arrival_params(const ArrivalParams& params);

// A rate given per E2E of a request served alone (e2e_alone_ms, measured),
// in requests per second: rate × 1000 ÷ e2e_alone_ms. Throws sixstep::Error
// naming both when that is outside min_arrival_rate .. max_arrival_rate.
double rate_per_e2e_alone(double rate, double e2e_alone_ms);

// count arrival times in milliseconds, non-decreasing, the first at 0.
// For kind trace, throws: the times come from the file.
std::vector<double> arrival_times_ms(const ArrivalParams& params);

}  // namespace sixstep::serving
