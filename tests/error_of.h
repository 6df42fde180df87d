// The message of the sixstep::Error a call throws, or "" when it throws none:
// tests compare whole messages, since a clear message is part of the contract.
#pragma once
#include <string>

#include "pipeline/core/error.h"

namespace sixstep::test {

template <typename Fn>
std::string error_of(Fn&& fn) {
    try {
        fn();
    } catch (const sixstep::Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace sixstep::test
