// How much memory this process may fill: the machine's RAM, or the control
// group's limit where one is set lower (a container). Memory that grows on
// demand (a server's KV pool) is sized against it before it starts, so that
// an oversized setting is a message at start, not the kernel's OOM killer an
// hour into serving.
//
//     if (pool_bytes > usable_memory_bytes()) throw Error(...);
#pragma once
#include <cstddef>

namespace sixstep {

// 0 when neither can be read.
std::size_t usable_memory_bytes();

}  // namespace sixstep
