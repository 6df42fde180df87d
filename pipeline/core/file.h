// Reading input files: regular files only.
//
// A FIFO blocks open() and read() until someone writes to it; a device such
// as /dev/zero never ends; a folder is not a file at all. Every file sixstep
// reads by name (lessons, weights, training data; GGUF models map the same
// way in gguf.cpp) is opened without blocking and checked before a byte is
// read, so each of those gives one clear error instead of a hang:
//
//     lessons/x.yaml: cannot open the lesson file: it is a FIFO (named pipe), not a regular file
//
// Writing: AtomicFile puts the bytes in a temporary file next to the target
// and renames it over the target only on commit(), so a failed or
// interrupted write never leaves half a file behind.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace sixstep {

// "a FIFO (named pipe)", "a folder", "a character device", … for a st_mode
// that is not a regular file.
std::string describe_file_type(mode_t mode);

// The whole file. `what` names it in errors ("the lesson file"). Throws
// sixstep::Error at SourceLocation{path} when it cannot be opened, is not a
// regular file, or holds more than max_bytes.
std::string read_regular_file(const std::string& path, std::string_view what, std::uint64_t max_bytes);

// Refuses to write over anything but a regular file, and over a regular file
// unless `overwrite`. `flag` is the option that allows overwriting ("--force").
void check_output_file(const std::string& path, bool overwrite, std::string_view flag);

// A file written completely or not at all.
//
//     AtomicFile out("model.gguf");   // creates a hidden temporary next to it
//     out.write(header);  out.write(data);
//     out.commit();                   // renames it over model.gguf
//     // destroyed without commit() (an exception, Ctrl+C): the temporary is removed
class AtomicFile {
public:
    explicit AtomicFile(std::string path);  // throws sixstep::Error
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    void write(const void* data, std::size_t n);  // throws sixstep::Error (disk full, …)
    void write(std::string_view s) { write(s.data(), s.size()); }
    void commit();                                 // throws sixstep::Error; never over a non-regular file

private:
    std::string path_, tmp_;
    int fd_ = -1;
};

}  // namespace sixstep
