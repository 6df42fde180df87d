#include "app/server/client_watchdog.h"

#include <algorithm>

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
    return Watch(*this, id);
}

void ClientWatchdog::unwatch(std::uint64_t id) {
    // Under the lock: once this returns, the watchdog never touches the
    // client again, and its owner may destroy it.
    std::lock_guard lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.id == id; }),
                   entries_.end());
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
            if (e.outcome != Outcome::running) e.client->stop();
        }
    }
}

ClientWatchdog::Watch::~Watch() { dog_.unwatch(id_); }

ClientWatchdog::Outcome ClientWatchdog::Watch::outcome() const { return dog_.outcome_of(id_); }

}  // namespace sixstep::server
