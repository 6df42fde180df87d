// A scratch folder for one test process, removed when the process exits, so
// that running the suite leaves nothing behind in /tmp.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <unistd.h>

namespace sixstep::test {

inline std::filesystem::path process_temp_dir(const std::string& name) {
    struct Folders {
        std::map<std::string, std::filesystem::path> by_name;
        ~Folders() {
            std::error_code ec;
            for (const auto& [n, p] : by_name) std::filesystem::remove_all(p, ec);
        }
    };
    static Folders folders;
    auto it = folders.by_name.find(name);
    if (it == folders.by_name.end()) {
        const auto p = std::filesystem::temp_directory_path() / ("sixstep-test-" + name + "-" + std::to_string(::getpid()));
        std::filesystem::create_directories(p);
        it = folders.by_name.emplace(name, p).first;
    }
    return it->second;
}

}  // namespace sixstep::test
