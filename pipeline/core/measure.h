// What the timing code shares: milliseconds since a moment on the steady
// clock, and the median of repeated runs — the figure the benchmarks
// report, because one run the OS interrupted moves a mean but not a median.
//
//     const auto t0 = std::chrono::steady_clock::now();
//     ...
//     times.push_back(ms_since(t0));
//     double typical = median(times);
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace sixstep {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The middle value (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The same median of values that keep coming, asked for after each one (a
// generation's decode steps, whose clocks a stepped lesson reads every
// token): the lower half in a max-heap, the upper in a min-heap, so adding
// costs a log and asking nothing, where sorting a copy each time grew with
// the square of the tokens.
class RunningMedian {
public:
    void add(double x) {
        if (lower_.empty() || x <= lower_.front()) push(lower_, x, std::less<>{});
        else push(upper_, x, std::greater<>{});
        // Keep the lower half as large as the upper, or one larger.
        if (lower_.size() > upper_.size() + 1) move_top(lower_, std::less<>{}, upper_, std::greater<>{});
        else if (upper_.size() > lower_.size()) move_top(upper_, std::greater<>{}, lower_, std::less<>{});
    }
    double get() const {
        if (lower_.empty()) return 0;
        return lower_.size() > upper_.size() ? lower_.front() : 0.5 * (lower_.front() + upper_.front());
    }

private:
    template <class Less>
    static void push(std::vector<double>& heap, double x, Less less) {
        heap.push_back(x);
        std::push_heap(heap.begin(), heap.end(), less);
    }
    template <class From, class To>
    static void move_top(std::vector<double>& from, From from_less, std::vector<double>& to, To to_less) {
        std::pop_heap(from.begin(), from.end(), from_less);
        push(to, from.back(), to_less);
        from.pop_back();
    }
    std::vector<double> lower_, upper_;  // max-heap, min-heap
};

}  // namespace sixstep
