#include "app/server/client_watchdog.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include "pipeline/core/progress.h"

namespace sixstep::server {

namespace {
// How often the watchdog looks: a late client is stopped within this of its
// deadline, and Ctrl+C is answered within it.
constexpr auto look_every = std::chrono::milliseconds(20);
}  // namespace

ClientWatchdog::ClientWatchdog() : thread_([this] { run(); }) {}

ClientWatchdog::~ClientWatchdog() {
    {
        std::lock_guard lock(mutex_);
        quit_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

ClientWatchdog::Watch ClientWatchdog::watch(httplib::Client& client, Clock::time_point deadline) {
    std::lock_guard lock(mutex_);
    const std::uint64_t id = next_id_++;
    entries_.push_back({id, &client, deadline, Outcome::running});
    {
        std::lock_guard sockets_lock(sockets_mutex_);
        sockets_[id] = {};
    }
    return Watch(*this, id);
}

void ClientWatchdog::unwatch(std::uint64_t id) {
    // Under the lock: once this returns, the watchdog never touches the
    // client again, and its owner may destroy it.
    std::lock_guard lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.id == id; }),
                   entries_.end());
    std::lock_guard sockets_lock(sockets_mutex_);
    if (const auto it = sockets_.find(id); it != sockets_.end()) {
        if (it->second.fd >= 0) ::close(it->second.fd);
        sockets_.erase(it);
    }
}

// A duplicate, not the number: the client closes its own descriptor when a
// connect fails, and the number may then name another connection's socket.
// The duplicate names this socket until it is closed here.
void ClientWatchdog::keep_socket(std::uint64_t id, int fd) {
    const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    std::lock_guard sockets_lock(sockets_mutex_);
    const auto it = sockets_.find(id);
    if (it == sockets_.end()) {
        if (dup >= 0) ::close(dup);
        return;
    }
    if (it->second.fd >= 0) ::close(it->second.fd);
    it->second.fd = dup;
    // Already late or cancelled: this connect ends at once too.
    if (dup >= 0 && it->second.stopped) ::shutdown(dup, SHUT_RDWR);
}

// Ends a connect in progress, or any exchange, on the client's socket.
void ClientWatchdog::shut_socket(std::uint64_t id) {
    std::lock_guard sockets_lock(sockets_mutex_);
    const auto it = sockets_.find(id);
    if (it == sockets_.end()) return;
    it->second.stopped = true;
    if (it->second.fd >= 0) ::shutdown(it->second.fd, SHUT_RDWR);
}

ClientWatchdog::Outcome ClientWatchdog::outcome_of(std::uint64_t id) const {
    std::lock_guard lock(mutex_);
    for (const Entry& e : entries_)
        if (e.id == id) return e.outcome;
    return Outcome::running;
}

void ClientWatchdog::run() {
    std::unique_lock lock(mutex_);
    while (!quit_) {
        wake_.wait_for(lock, look_every);
        const bool cancelled = cancel_requested();
        const Clock::time_point now = Clock::now();
        for (Entry& e : entries_) {
            if (e.outcome == Outcome::running && (cancelled || now >= e.deadline))
                e.outcome = cancelled ? Outcome::cancelled : Outcome::late;
            if (e.outcome != Outcome::running) {
                // First: stop() waits for the client's socket lock, which
                // the client holds while it connects.
                shut_socket(e.id);
                e.client->stop();
            }
        }
    }
}

ClientWatchdog::Watch::~Watch() { dog_.unwatch(id_); }

void ClientWatchdog::Watch::track_sockets(httplib::Client& client) const {
    // By id: a socket made after the watch ended finds no entry, and its
    // duplicate is closed at once.
    client.set_socket_options([&dog = dog_, id = id_](socket_t sock) { dog.keep_socket(id, static_cast<int>(sock)); });
}

ClientWatchdog::Outcome ClientWatchdog::Watch::outcome() const { return dog_.outcome_of(id_); }

}  // namespace sixstep::server
