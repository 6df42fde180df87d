#include "pipeline/tools/cold_start.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/llm/backend.h"
#include "pipeline/llm/generator.h"
#include "pipeline/llm/text_codec.h"
#include "pipeline/llm/vocab/vocab.h"

namespace sixstep::llm {

namespace {

using Clock = std::chrono::steady_clock;

// A file descriptor closed on every path out.
struct Fd {
    int fd = -1;
    explicit Fd(const std::filesystem::path& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

struct Faults {
    long major = 0, minor = 0;
};
Faults faults_now() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return {u.ru_majflt, u.ru_minflt};
}

// One serving instance: everything a fresh process builds before it can answer.
struct Instance {
    std::shared_ptr<const LlamaModel> model;
    std::unique_ptr<TextCodec> codec;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Generator> generator;
};

std::unique_ptr<Instance> start_instance(const ColdStartParams& p) {
    auto in = std::make_unique<Instance>();
    in->model = LlamaModel::load(p.model);
    in->codec = make_vocab_codec(std::make_shared<const Vocab>(Vocab::from_gguf(in->model->file())));
    in->backend = make_backend(p.backend, in->model, {.n_threads = p.n_threads}).backend;
    in->generator = std::make_unique<Generator>(*in->backend, *in->codec);
    return in;
}

// One request; starts an instance first when there is none (a cold start).
RequestTiming serve(std::unique_ptr<Instance>& in, const ColdStartParams& p, int index) {
    RequestTiming t;
    t.index = index;
    const PageCacheResidency res = page_cache_residency(p.model);  // outside the clock
    t.resident_before = res.fraction();
    const bool cold = !in;
    const Faults f0 = faults_now();
    const auto t0 = Clock::now();
    if (cold) in = start_instance(p);
    const auto t_loaded = cold ? Clock::now() : t0;
    GenerateParams gp;
    gp.n_predict = p.n_predict;
    gp.sampling.temperature = 0;
    gp.stop_at_eog = false;  // every request the same length
    const GenerateResult r = in->generator->generate(p.prompt, gp);
    const auto t_end = Clock::now();
    const Faults f1 = faults_now();
    // Three readings of one clock, so that load + request is the total: the
    // engine's own request time leaves out the generator's bookkeeping around
    // it (0.01-0.07 ms, which made lesson 14's sums come out short).
    using Ms = std::chrono::duration<double, std::milli>;
    t.load_ms = Ms(t_loaded - t0).count();
    t.request_ms = Ms(t_end - t_loaded).count();
    t.total_ms = Ms(t_end - t0).count();
    t.ttft_ms = r.timings.ttft_ms;
    t.major_faults = f1.major - f0.major;
    t.minor_faults = f1.minor - f0.minor;
    t.start = !cold ? Start::warm : res.known && res.fraction() < 0.01 ? Start::cold_disk : Start::cold_cached;
    return t;
}

void check_params(const ColdStartParams& p) {
    if (p.n_predict < 1 || p.n_predict > 4096)
        throw Error(fmt::format("cold start: {} tokens per request: give 1..4096", p.n_predict));
    if (p.n_warm < 1 || p.n_warm > 1000)
        throw Error(fmt::format("cold start: {} warm requests: give 1..1000", p.n_warm));
    if (p.idle_s.size() > 1000) throw Error(fmt::format("cold start: {} idle gaps: give at most 1000", p.idle_s.size()));
    for (double g : p.idle_s)
        if (!std::isfinite(g) || g < 0 || g > 1e9)
            throw Error(fmt::format("cold start: idle gap {} s: give a finite number of seconds, 0..1e9", g));
    // From a millisecond: a smaller wait printed as "0 s" in the held-weights sums.
    if (!(p.unload_after_s >= 1e-3 && p.unload_after_s <= 1e9))
        throw Error(fmt::format("cold start: unload after {} s: give a finite number of seconds, 0.001 to 1e9",
                                p.unload_after_s));
    if (p.prompt.empty()) throw Error("cold start: the prompt is empty");
}

}  // namespace

const char* start_name(Start s) {
    switch (s) {
        case Start::cold_disk: return "cold (from disk)";
        case Start::cold_cached: return "cold (page cache)";
        case Start::warm: return "warm";
    }
    return "?";
}

PageCacheResidency page_cache_residency(const std::filesystem::path& file) {
    PageCacheResidency r;
    Fd f(file);
    struct stat st{};
    if (f.fd < 0 || ::fstat(f.fd, &st) != 0) return r;
    const long page = ::sysconf(_SC_PAGESIZE);
    if (st.st_size == 0 || page <= 0) return r;
    const auto size = static_cast<std::size_t>(st.st_size);
    // A fresh read-only mapping touches nothing; mincore reports, for a
    // file-backed mapping, which pages the page cache holds.
    void* addr = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, f.fd, 0);
    if (addr == MAP_FAILED) return r;
    r.pages = (size + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page);
    std::vector<unsigned char> vec(r.pages);
    if (::mincore(addr, size, vec.data()) == 0) {
        r.known = true;
        for (unsigned char v : vec) r.resident += v & 1u;
    }
    ::munmap(addr, size);
    return r;
}

PageCacheDrop drop_page_cache(const std::filesystem::path& file) {
    PageCacheDrop d;
    const PageCacheResidency before = page_cache_residency(file);
    d.before = before.fraction();
    Fd f(file);
    if (f.fd < 0) throw Error(fmt::format("{}: cannot open the file", file.string()));
    // Dirty pages are never dropped: write them back first.
    ::fdatasync(f.fd);
    const int rc = ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
    d.attempted = rc == 0;
    const PageCacheResidency after = page_cache_residency(file);
    d.after = after.fraction();
    d.verified = d.attempted && after.known && after.fraction() < 0.01;
    if (rc != 0)
        d.note = fmt::format("posix_fadvise(DONTNEED) failed (error {}): the file stays in the page cache", rc);
    else if (!after.known)
        d.note = "mincore could not report the file's pages: whether the cache was dropped is unknown";
    else if (!d.verified)
        d.note = fmt::format("the kernel kept {:.0f}% of the file's pages cached (another process may map it, or the file "
                             "system ignores the advice): a \"cold\" request reads them from memory",
                             100 * after.fraction());
    return d;
}

namespace {

// Every request measure_cold_start serves: the process's first, the two cold ones, the warm ones,
// and with idle gaps one untimed request and one per gap on each instance.
long long requests_served(const ColdStartParams& p) {
    const long long gaps = static_cast<long long>(p.idle_s.size());
    return 3 + p.n_warm + (gaps > 0 ? 2 * (1 + gaps) : 0);
}

}  // namespace

long long cold_start_positions_at_most(const ColdStartParams& p) {
    return requests_served(p) * (encoded_tokens_at_most(p.prompt) + p.n_predict);
}

ColdStartResult measure_cold_start(const ColdStartParams& p) {
    check_params(p);
    // Progress between requests, outside what each one times; also where
    // Ctrl+C stops the run.
    const auto total = static_cast<std::uint64_t>(requests_served(p));
    std::uint64_t done = 0;
    const auto run = [&](std::unique_ptr<Instance>& in, int index) {
        report_progress("cold start (requests served)", done++, total);
        return serve(in, p, index);
    };
    ColdStartResult r;
    r.model = p.model.filename().string();
    std::error_code ec;
    r.file_bytes = std::filesystem::file_size(p.model, ec);
    if (ec) throw Error(fmt::format("{}: cannot read the file ({})", p.model.string(), ec.message()));

    // The process's first request, then the cold ones, then warm ones on
    // the same instance. Timed apart, both cold requests start in a process
    // that has run once: "from disk − from the page cache" is the disk's.
    std::unique_ptr<Instance> in;
    r.process_first = run(in, -1);
    in.reset();
    if (p.drop_cache) {
        r.drop = drop_page_cache(p.model);
        if (!r.drop.verified) r.notes.push_back("page cache not dropped: " + r.drop.note);
    } else {
        r.notes.push_back("page cache left as it was (drop_cache off)");
    }
    r.requests.push_back(run(in, 0));
    r.n_params = in->model->n_params();
    r.keep_warm.weight_bytes = static_cast<double>(in->model->file().n_tensor_bytes());
    in.reset();  // unload: the next instance finds the file in the page cache
    r.requests.push_back(run(in, 1));
    for (int i = 0; i < p.n_warm; ++i) r.requests.push_back(run(in, 2 + i));
    in.reset();
    std::vector<double> warm;
    for (const RequestTiming& t : r.requests)
        if (t.start == Start::warm) warm.push_back(t.total_ms);
    r.warm_median_ms = median(warm);
    r.cold_over_warm = r.warm_median_ms > 0 ? r.requests[0].total_ms / r.warm_median_ms : 0;

    // Keep warm. Each instance has served traffic before the first gap (one
    // untimed request); one runs at a time, so the kept one's mapping never
    // stops the other's eviction.
    KeepWarm& kw = r.keep_warm;
    if (!p.idle_s.empty()) {
        kw.cold_from_disk = p.drop_cache;
        std::unique_ptr<Instance> scale_to_zero;
        run(scale_to_zero, -1);
        for (std::size_t i = 0; i < p.idle_s.size(); ++i) {
            KeepWarmRow row;
            row.index = static_cast<int>(i);
            row.idle_s = p.idle_s[i];
            row.unloaded = row.idle_s >= p.unload_after_s;
            // Idle: loaded until unload_after_s has passed, then gone, and
            // the next instance may start on a machine without the file cached.
            kw.scale_to_zero_held_s += std::min(row.idle_s, p.unload_after_s);
            if (row.unloaded) {
                scale_to_zero.reset();
                ++kw.n_cold;
                if (p.drop_cache) kw.cold_from_disk = drop_page_cache(p.model).verified && kw.cold_from_disk;
            }
            const RequestTiming t = run(scale_to_zero, row.index);
            row.scale_to_zero_ms = t.total_ms;
            kw.scale_to_zero_held_s += t.total_ms / 1000;
            kw.rows.push_back(row);
        }
        scale_to_zero.reset();
        std::unique_ptr<Instance> kept;
        run(kept, -1);
        for (KeepWarmRow& row : kw.rows) {
            const RequestTiming t = run(kept, row.index);
            row.kept_warm_ms = t.total_ms;
            kw.kept_warm_held_s += row.idle_s + t.total_ms / 1000;
        }
        for (const KeepWarmRow& row : kw.rows) {
            kw.scale_to_zero_total_ms += row.scale_to_zero_ms;
            kw.kept_warm_total_ms += row.kept_warm_ms;
            kw.scale_to_zero_worst_ms = std::max(kw.scale_to_zero_worst_ms, row.scale_to_zero_ms);
            kw.kept_warm_worst_ms = std::max(kw.kept_warm_worst_ms, row.kept_warm_ms);
        }
        kw.cold_from_disk = kw.cold_from_disk && kw.n_cold > 0;
        if (kw.n_cold > 0 && p.drop_cache && !kw.cold_from_disk)
            r.notes.push_back("keep warm: not every cold start found the file evicted from the page cache");
    }
    r.notes.push_back("idle gaps are on a virtual clock: nothing sleeps, every request is run and timed");
    r.notes.push_back("a warm request here also finds the CPU caches warm from the request before it; after a real "
                      "idle period they may not be");
    return r;
}

bool compares_disk_and_cache(const ColdStartResult& r) {
    return r.requests.size() >= 2 && r.requests[0].start == Start::cold_disk && r.requests[1].start == Start::cold_cached;
}

std::optional<double> disk_read_ms(const ColdStartResult& r) {
    if (!compares_disk_and_cache(r)) return std::nullopt;
    const double d = r.requests[0].load_ms - r.requests[1].load_ms;
    return d > 0 ? std::optional<double>(d) : std::nullopt;
}

nlohmann::ordered_json cold_start_json(const ColdStartResult& r) {
    nlohmann::ordered_json j;
    j["model"] = r.model;
    j["file_bytes"] = r.file_bytes;
    j["n_params"] = r.n_params;
    j["page_cache_drop"] = {{"attempted", r.drop.attempted},
                            {"verified", r.drop.verified},
                            {"resident_before", r.drop.before},
                            {"resident_after", r.drop.after},
                            {"note", r.drop.note}};
    const auto timing = [](const RequestTiming& t) {
        return nlohmann::ordered_json{{"index", t.index},
                                      {"start", start_name(t.start)},
                                      {"resident_before", t.resident_before},
                                      {"load_ms", t.load_ms},
                                      {"ttft_ms", t.ttft_ms},
                                      {"request_ms", t.request_ms},
                                      {"total_ms", t.total_ms},
                                      {"major_faults", t.major_faults},
                                      {"minor_faults", t.minor_faults}};
    };
    j["process_first"] = timing(r.process_first);
    nlohmann::ordered_json reqs = nlohmann::ordered_json::array();
    for (const RequestTiming& t : r.requests) reqs.push_back(timing(t));
    j["requests"] = reqs;
    j["warm_median_ms"] = r.warm_median_ms;
    j["cold_over_warm"] = r.cold_over_warm;
    // Null, as a figure that was not measured: no load from disk beside one
    // from the cache, or the two within the noise of each other.
    const std::optional<double> disk = disk_read_ms(r);
    j["disk_read_ms"] = disk ? nlohmann::ordered_json(*disk) : nlohmann::ordered_json();
    const KeepWarm& kw = r.keep_warm;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const KeepWarmRow& row : kw.rows)
        rows.push_back({{"index", row.index},
                        {"idle_s", row.idle_s},
                        {"unloaded", row.unloaded},
                        {"scale_to_zero_ms", row.scale_to_zero_ms},
                        {"kept_warm_ms", row.kept_warm_ms}});
    j["keep_warm"] = {{"rows", rows},
                      {"n_cold", kw.n_cold},
                      {"cold_from_disk", kw.cold_from_disk},
                      {"scale_to_zero_total_ms", kw.scale_to_zero_total_ms},
                      {"kept_warm_total_ms", kw.kept_warm_total_ms},
                      {"scale_to_zero_worst_ms", kw.scale_to_zero_worst_ms},
                      {"kept_warm_worst_ms", kw.kept_warm_worst_ms},
                      {"scale_to_zero_held_s", kw.scale_to_zero_held_s},
                      {"kept_warm_held_s", kw.kept_warm_held_s},
                      {"weight_bytes", kw.weight_bytes}};
    j["notes"] = r.notes;
    return j;
}

}  // namespace sixstep::llm
