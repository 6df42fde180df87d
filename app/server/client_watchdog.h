// ClientWatchdog: ends an HTTP client's request when its deadline passes or
// Ctrl+C asks (pipeline/core/progress.h).
//
// cpp-httplib's timeouts bound each read, not a whole answer: a server that
// sends one header line every half second kept `sixstep load` waiting
// forever, and no callback of ours runs before the header ends, so nothing
// noticed Ctrl+C either. The watchdog's thread looks at every watched client
// each few milliseconds and stops the late ones (httplib::Client::stop()
// shuts its socket down, and the blocked read returns an error). It stops a
// late client again at each look, so one that was still connecting when it
// was first stopped is stopped once it has a socket.
//
//     ClientWatchdog dog;
//     httplib::Client cli(origin);
//     ClientWatchdog::Watch w = dog.watch(cli, Clock::now() + 10s);
//     auto r = cli.Get("/v1/models");
//     if (w.outcome() == ClientWatchdog::Outcome::late) …   // "no answer within 10 s"
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace httplib {
class Client;
}

namespace sixstep::server {

class ClientWatchdog {
public:
    using Clock = std::chrono::steady_clock;
    enum class Outcome { running, late, cancelled };  // why a client was stopped

    // A client under watch, until this goes (before the client does).
    class Watch {
    public:
        Watch(const Watch&) = delete;
        Watch& operator=(const Watch&) = delete;
        ~Watch();
        Outcome outcome() const;

    private:
        friend class ClientWatchdog;
        Watch(ClientWatchdog& dog, std::uint64_t id) : dog_(dog), id_(id) {}
        ClientWatchdog& dog_;
        std::uint64_t id_;
    };

    ClientWatchdog();   // starts its thread
    ~ClientWatchdog();  // stops it; every Watch has gone by then
    ClientWatchdog(const ClientWatchdog&) = delete;
    ClientWatchdog& operator=(const ClientWatchdog&) = delete;

    Watch watch(httplib::Client& client, Clock::time_point deadline);

private:
    struct Entry {
        std::uint64_t id;
        httplib::Client* client;
        Clock::time_point deadline;
        Outcome outcome;
    };
    void run();
    void unwatch(std::uint64_t id);
    Outcome outcome_of(std::uint64_t id) const;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<Entry> entries_;
    std::uint64_t next_id_ = 0;
    bool quit_ = false;
    std::thread thread_;  // last: started once the rest is ready
};

}  // namespace sixstep::server
