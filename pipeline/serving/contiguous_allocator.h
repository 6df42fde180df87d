// ContiguousAllocator: KV memory as systems before PagedAttention managed it —
// each request reserves one contiguous run for its whole maximum length
// (prompt + every token it may generate) the moment it is admitted, first
// fit in address order. It is simulated: the scheduler asks it whether a
// request may start, while the real keys and values still live in the paged
// cache. What it shows is what the reservation costs:
//   internal fragmentation  reserved positions no token fills (an answer that
//                           stops early leaves the rest of its run empty);
//   external fragmentation  free memory split into holes too small for the
//                           next request, though together they would hold it.
// Units are KV blocks, the same pool the paged cache has, so the two layouts
// compare on equal memory.
//
//     ContiguousAllocator a(64);
//     std::optional<int> at = a.allocate(/*owner*/ 7, /*size*/ 20);   // first fit: block 0
//     a.free(7);
#pragma once
#include <map>
#include <optional>
#include <vector>

namespace sixstep::serving {

struct ContiguousRegion {
    int owner = -1;  // request id
    int begin = 0;   // first unit
    int size = 0;    // units
};

class ContiguousAllocator {
public:
    explicit ContiguousAllocator(int capacity);  // units, >= 1

    int capacity() const { return capacity_; }
    int n_used() const { return n_used_; }
    int n_free() const { return capacity_ - n_used_; }
    int largest_hole() const;

    // The lowest-addressed hole of at least size units, given to owner; nothing
    // when no hole is large enough. Throws for size < 1 or an owner that
    // already holds a region.
    std::optional<int> allocate(int owner, int size);
    void free(int owner);  // throws when owner holds nothing
    bool holds(int owner) const { return by_owner_.count(owner) != 0; }
    std::vector<ContiguousRegion> regions() const;  // in address order

private:
    int capacity_ = 0;
    int n_used_ = 0;
    std::map<int, ContiguousRegion> by_begin_;  // begin → region
    std::map<int, int> by_owner_;               // owner → begin
};

}  // namespace sixstep::serving
