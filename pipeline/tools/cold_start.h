// Cold start vs warm: what the first request to a fresh instance pays that
// every later one does not.
//
// A fresh instance opens the GGUF file and maps it, reads every weight once
// (LlamaModel::load checks that each is a finite number), builds the
// vocabulary and the backend (the CPU's copies the matrices it multiplies
// into memory of its own), and only then runs the request. The load touches
// every page of the file for the first time, and each touch is a page
// fault: a minor one when the file is already in the operating system's
// page cache (the kernel only maps the page), a major one when it must be
// read from disk. So three kinds of request, measured one after another on
// the same file:
//   cold, from disk        the file evicted from the page cache first
//                          (fdatasync + posix_fadvise(POSIX_FADV_DONTNEED),
//                          checked with mincore): map + read + first touch;
//   cold, page cache       a new instance, the file still cached: map + first touch;
//   warm                   the same instance again: the request alone.
// Eviction is best effort: the kernel keeps pages that another process has
// mapped or that are dirty, and some file systems ignore the advice — the
// result says whether mincore confirmed it, and labels each request by the
// residency it actually found.
//
// Then "keep instances warm": requests arriving after idle gaps (a virtual
// clock: nothing sleeps; every request is run and measured) served by an
// instance that unloads after `unload_after_s` of idleness — and so pays a
// cold start, from disk, on the next request — beside one kept loaded, which
// answers every request warm but holds the weights in memory all along.
//
//     ColdStartParams p;  p.model = "assets/models/stories-3m-f16.gguf";
//     ColdStartResult r = measure_cold_start(p);
//     r.requests[0].start == Start::cold_disk;  r.cold_over_warm;  r.keep_warm.rows
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/llm/backend_kind.h"

namespace sixstep::llm {

// How much of a file the page cache holds (mincore on a fresh mapping).
struct PageCacheResidency {
    bool known = false;          // mincore answered
    std::uint64_t pages = 0;     // pages of the file
    std::uint64_t resident = 0;  // of those, in memory
    double fraction() const { return pages ? static_cast<double>(resident) / static_cast<double>(pages) : 0; }
};
PageCacheResidency page_cache_residency(const std::filesystem::path& file);

struct PageCacheDrop {
    bool attempted = false;  // posix_fadvise was called and returned 0
    bool verified = false;   // mincore found under 1% of the pages resident afterwards
    double before = 0;       // resident fraction before
    double after = 0;        // and after
    std::string note;        // why it could not be verified, when it could not
};
// Asks the kernel to drop the file's cached pages. Never throws for a refusal
// (the note says why); throws sixstep::Error when the file cannot be opened.
PageCacheDrop drop_page_cache(const std::filesystem::path& file);

enum class Start { cold_disk, cold_cached, warm };
const char* start_name(Start s);  // "cold (from disk)", "cold (page cache)", "warm"

struct RequestTiming {
    int index = 0;
    Start start = Start::warm;
    double resident_before = 0;  // page-cache fraction of the file when the request came
    double load_ms = 0;          // open + map + vocabulary + backend (0 when warm)
    double ttft_ms = 0;          // the request's time to first token (engine time)
    double request_ms = 0;       // the request itself, after the load (wall clock)
    double total_ms = 0;         // what the caller waited: load + request (wall clock, one clock)
    long major_faults = 0;       // page faults that read from disk (getrusage, whole process)
    long minor_faults = 0;       // page faults served from memory
};

struct ColdStartParams {
    std::filesystem::path model;           // a GGUF file (Llama architecture)
    std::string prompt = "Once upon a time";
    int n_predict = 16;                    // tokens per request, 1..4096
    int n_warm = 3;                        // warm requests after the cold ones, 1..1000
    int n_threads = 0;                     // CPU threads; <= 0 → the backend's default
    BackendKind backend = BackendKind::cpu;  // where each instance runs (a GPU's cold start uploads the weights)
    bool drop_cache = true;                // try to evict the file before the cold-from-disk request
    // Keep warm: the idle gap before each request (virtual seconds, >= 0),
    // and how long the scale-to-zero instance stays loaded while idle (> 0).
    std::vector<double> idle_s = {0, 20, 300, 5, 900, 30};
    double unload_after_s = 60;
};

struct KeepWarmRow {
    int index = 0;
    double idle_s = 0;            // gap before this request
    bool unloaded = false;        // the scale-to-zero instance had unloaded: a cold start
    double scale_to_zero_ms = 0;  // what the caller waited (measured)
    double kept_warm_ms = 0;      // the same request on the instance kept loaded (measured)
};
struct KeepWarm {
    std::vector<KeepWarmRow> rows;
    int n_cold = 0;                     // requests the scale-to-zero instance started cold
    bool cold_from_disk = false;        // its cold starts read the file from disk (eviction confirmed each time)
    double scale_to_zero_total_ms = 0;  // Σ waits
    double kept_warm_total_ms = 0;
    double scale_to_zero_worst_ms = 0;  // the longest single wait
    double kept_warm_worst_ms = 0;
    double scale_to_zero_held_s = 0;    // seconds the weights stayed in memory (virtual clock)
    double kept_warm_held_s = 0;
    double weight_bytes = 0;            // the file's tensor bytes: what "held in memory" holds
};

struct ColdStartResult {
    std::string model;              // the file name
    std::uint64_t file_bytes = 0;
    std::uint64_t n_params = 0;
    PageCacheDrop drop;             // before the first request (attempted only with drop_cache)
    // The process's own first load and request, before any of `requests`
    // (and before the page cache is dropped): its code, heap and threads
    // start cold once per process, about 10 ms on the bundled model that
    // the first timed request would otherwise count as reading the disk.
    RequestTiming process_first;
    std::vector<RequestTiming> requests;  // the cold one(s) first, then the warm ones
    double warm_median_ms = 0;      // median total of the warm requests
    double cold_over_warm = 0;      // the first request's total ÷ warm_median_ms
    KeepWarm keep_warm;             // empty rows when idle_s is empty
    std::vector<std::string> notes; // what was and was not verified
};

// Runs everything (several seconds for a 110M model). Throws sixstep::Error
// for bad parameters or a file that is not a Llama GGUF model.
ColdStartResult measure_cold_start(const ColdStartParams& params);

// The most token positions measure_cold_start computes (for a lesson's work
// budget): its cold and warm requests, and with idle gaps one untimed
// request and one per gap on each instance, each the prompt and n_predict
// tokens. The loads it times are not counted.
long long cold_start_positions_at_most(const ColdStartParams& params);

// What reading the file from disk cost: the first request's load (from
// disk) less the second's (from the page cache). Empty when those two were
// not a load from disk and one from the cache, and when the difference is
// not above zero: on a busy machine the load from the cache can take as
// long or longer, and a negative time to read a disk is noise, not a time.
std::optional<double> disk_read_ms(const ColdStartResult& r);
// Whether the first two requests were a load from disk and one from the page cache.
bool compares_disk_and_cache(const ColdStartResult& r);

// disk_read_ms is null where disk_read_ms(r) is empty.
nlohmann::ordered_json cold_start_json(const ColdStartResult& r);

}  // namespace sixstep::llm
