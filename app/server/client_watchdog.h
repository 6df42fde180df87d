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
// stop() cannot end a connect in progress (the client has no socket of its
// own yet): against a listener whose accept queue is full, a request waited
// out its connection timeout whatever its deadline or Ctrl+C said. A client
// whose sockets are handed over with track_sockets() has its connect ended
// too: the watchdog keeps a duplicate of each socket the client makes and
// shuts it down, which ends a connect at once.
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
#include <map>
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
        // Sets the client's socket options so that each socket it makes is
        // kept (duplicated) for the watchdog to shut down. Replaces any
        // socket options the client had.
        void track_sockets(httplib::Client& client) const;

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
    // A watched client's latest socket, duplicated (-1: none), and whether
    // the watchdog stopped it. Under sockets_mutex_ alone, which is taken
    // with no other lock held after it: the client hands its sockets over
    // while it holds its own socket lock, which stop() waits for.
    struct Socket {
        int fd = -1;
        bool stopped = false;
    };
    void keep_socket(std::uint64_t id, int fd);
    void shut_socket(std::uint64_t id);
    void run();
    void unwatch(std::uint64_t id);
    Outcome outcome_of(std::uint64_t id) const;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<Entry> entries_;
    std::uint64_t next_id_ = 0;
    bool quit_ = false;
    std::mutex sockets_mutex_;
    std::map<std::uint64_t, Socket> sockets_;
    std::thread thread_;  // last: started once the rest is ready
};

}  // namespace sixstep::server
