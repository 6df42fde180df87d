#include "pipeline/core/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "pipeline/core/error.h"

namespace sixstep {

namespace {

// Closes a descriptor on every path out.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

std::string human_size(std::uint64_t n) {
    if (n >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(n) / (1ull << 30));
    if (n >= (1ull << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1ull << 20));
    if (n >= (1ull << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / (1ull << 10));
    return fmt::format("{} bytes", n);
}

}  // namespace

std::string describe_file_type(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

std::string read_regular_file(const std::string& path, std::string_view what, std::uint64_t max_bytes) {
    const SourceLocation where{path};
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    if (f.fd < 0) throw Error(where, fmt::format("cannot open {}: {}", what, std::strerror(errno)));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) throw Error(where, fmt::format("cannot open {}: {}", what, std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
        throw Error(where, fmt::format("cannot open {}: it is {}, not a regular file", what, describe_file_type(st.st_mode)));
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
        throw Error(where, fmt::format("{} is {}; sixstep reads at most {}", what,
                                       human_size(static_cast<std::uint64_t>(st.st_size)), human_size(max_bytes)));
    // Back to blocking reads: a regular file never waits anyway.
    ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(f.fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(where, fmt::format("cannot read {}: {}", what, std::strerror(errno)));
        }
        if (n == 0) break;
        // The size may change while we read (or be 0 for files in /proc).
        if (bytes.size() + static_cast<std::size_t>(n) > max_bytes)
            throw Error(where, fmt::format("{} is over {}, the most sixstep reads", what, human_size(max_bytes)));
        bytes.append(buf, static_cast<std::size_t>(n));
    }
    return bytes;
}

void check_output_file(const std::string& path, bool overwrite, std::string_view flag) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return;
        throw Error(SourceLocation{path}, fmt::format("cannot write here: {}", std::strerror(errno)));
    }
    // lstat: a symbolic link is refused too; the rename would replace the link.
    if (!S_ISREG(st.st_mode))
        throw Error(SourceLocation{path},
                    fmt::format("will not write here: it is {}, not a regular file",
                                S_ISLNK(st.st_mode) ? "a symbolic link" : describe_file_type(st.st_mode)));
    if (!overwrite)
        throw Error(SourceLocation{path}, fmt::format("the file exists; add {} to overwrite it", flag));
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
    namespace fs = std::filesystem;
    const fs::path target(path_);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    tmp_ = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    fd_ = ::mkstemp(tmp_.data());  // a new regular file, never an existing one
    if (fd_ < 0) throw Error(SourceLocation{path_}, fmt::format("cannot write: {}", std::strerror(errno)));
    // mkstemp makes the file 0600; give it the usual permissions (less umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    for (std::size_t at = 0; at < n;) {
        const ssize_t k = ::write(fd_, p + at, n - at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) throw Error(SourceLocation{path_}, fmt::format("cannot write: {}", std::strerror(errno)));
        at += static_cast<std::size_t>(k);
    }
}

void AtomicFile::commit() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw Error(SourceLocation{path_}, fmt::format("cannot write: {}", std::strerror(errno)));
    // Whatever the caller checked: the rename would put a file where a
    // device, a FIFO or a link was (quantize once replaced /dev/null).
    if (struct stat st {}; ::lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw Error(SourceLocation{path_},
                    fmt::format("will not write here: it is {}, not a regular file",
                                S_ISLNK(st.st_mode) ? "a symbolic link" : describe_file_type(st.st_mode)));
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
        throw Error(SourceLocation{path_}, fmt::format("cannot write: {}", std::strerror(errno)));
    tmp_.clear();
}

}  // namespace sixstep
