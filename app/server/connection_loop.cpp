#include "app/server/connection_loop.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sixstep::server {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A wait is cut into slices this long, each ending with a look at whether
// the server was stopped.
constexpr milliseconds stop_check{100};
// A thread the pool added ends after this long without a connection.
constexpr std::chrono::seconds extra_thread_idle{5};
// A request's line and headers, and any one line of it: cpp-httplib reads a
// line whole, however long (one endless header line took 600 MB in 9 s).
constexpr std::size_t max_head_bytes = 64 * 1024;
// After the last answer, how long the client may still send while it reads
// the answer (the lingering close in process_and_close_socket).
constexpr milliseconds linger_time{2000};
// Once the server has stopped, how long a write still waits for room: a
// client that reads what it is sent gets the stream's last events, and one
// that stopped reading no longer holds the shutdown for the write timeout.
constexpr milliseconds write_time_after_stop{1000};

std::chrono::milliseconds as_ms(time_t sec, time_t usec) {
    return milliseconds(static_cast<long long>(sec) * 1000 + static_cast<long long>(usec) / 1000);
}

// One connection's bytes, from its accept to its close: what came ahead of
// the request being read stays here for the next one.
class ConnectionStream final : public httplib::Stream {
public:
    ConnectionStream(socket_t fd, const std::atomic<socket_t>& listener, milliseconds read_timeout,
                     milliseconds write_timeout, milliseconds request_timeout)
        : fd_(fd), listener_(listener), read_timeout_(read_timeout), write_timeout_(write_timeout),
          request_timeout_(request_timeout) {}

    RequestCut cut;            // why the request being read ended early; status 0 while it has not
    bool close_after = false;  // set by a handler: no request after this one
    bool client_closed = false;  // the client closed its sending side: nothing more will come

    // Whether a request has begun to arrive (or the client closed): false
    // when the connection stayed idle for `idle`, or the server stopped.
    bool await_request(milliseconds idle) {
        if (stopped()) return false;
        if (off_ < len_) return true;  // pipelined: it came with the request before
        short revents = 0;
        return wait_for(POLLIN, Clock::now() + idle, true, revents) == Wait::ready;
    }
    void begin_request() {
        deadline_ = Clock::now() + request_timeout_;
        ended_ = false;
        cut = {};
        in_head_ = true;
        started_ = false;
        head_bytes_ = line_bytes_ = 0;
    }
    void end_request() { deadline_ = Clock::time_point::max(); }

    bool is_readable() const override {
        short revents = 0;
        return off_ < len_ || wait_for(POLLIN, Clock::now() + read_timeout_, true, revents) == Wait::ready;
    }

    // Room to write within the write timeout, and no error on the socket.
    // No peek at the reading side: a client that has sent all it will send
    // and closed that side still reads its answer.
    bool is_writable() const override {
        short revents = 0;
        return wait_for(POLLOUT, Clock::now() + write_timeout_, false, revents) == Wait::ready &&
               (revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
    }

    // cpp-httplib reads a request's line and headers (and a chunked body's
    // size lines) a byte at a time, and its body in blocks: a byte read is
    // part of a line, and lines are held to max_head_bytes.
    ssize_t read(char* ptr, std::size_t size) override {
        for (;;) {
            const ssize_t n = next(ptr, size);
            if (n != 1 || size != 1) {
                line_bytes_ = 0;
                return n;
            }
            const char c = *ptr;
            // Empty lines before a request line are skipped (RFC 9112, 2.2).
            if (!started_ && (c == '\r' || c == '\n')) continue;
            started_ = true;
            if (c == '\n') {
                // The empty line that ends the head, as cpp-httplib reads it
                // (CRLF; a bare LF line it skips): the body comes next.
                if (line_bytes_ == 1 && last_ == '\r') in_head_ = false;
                line_bytes_ = 0;
            } else {
                ++line_bytes_;
            }
            last_ = c;
            if (line_bytes_ > max_head_bytes || (in_head_ && ++head_bytes_ > max_head_bytes)) {
                end(431, fmt::format("{} longer than {} KiB",
                                     in_head_ ? "the request's line and headers are" : "a line of the request is",
                                     max_head_bytes / 1024));
                return 0;
            }
            return 1;
        }
    }

    // Reads and drops what the client still sends, until it closes, for at
    // most `limit` (or till the server stops).
    void drain(milliseconds limit) {
        const Clock::time_point until = Clock::now() + limit;
        while (!client_closed) {
            short revents = 0;
            if (wait_for(POLLIN, until, true, revents) != Wait::ready || receive() <= 0) return;
        }
    }

    ssize_t write(const char* ptr, std::size_t size) override {
        if (!is_writable()) return -1;
        ssize_t n;
        do n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n;
    }

    void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
    void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
    socket_t socket() const override { return fd_; }

private:
    enum class Wait { ready, timeout, stopped, failed };

    // Bytes as they came: from what was read ahead, else from the socket
    // once it has some; 0 at the request's end (the client's, or one the
    // limits made), -1 on an error.
    ssize_t next(char* ptr, std::size_t size) {
        if (ended_) return 0;  // cut short: what came after is not read as this request
        if (off_ < len_) return take(ptr, size);
        const Clock::time_point now = Clock::now();
        const bool whole_limit_first = deadline_ <= now + read_timeout_;
        short revents = 0;
        switch (wait_for(POLLIN, std::min(deadline_, now + read_timeout_), true, revents)) {
        case Wait::ready: break;
        case Wait::timeout:
            // To the parser the request ends here, so it answers what it
            // holds as a bad request, which the error handler makes a 408.
            end(408, whole_limit_first ? fmt::format("the request did not arrive whole within {} s of its first byte",
                                                     seconds_text(request_timeout_))
                                       : fmt::format("nothing came for {} s in the middle of the request",
                                                     seconds_text(read_timeout_)));
            return 0;
        case Wait::stopped: end(503, "the server is shutting down"); return 0;
        case Wait::failed: return -1;
        }
        const ssize_t n = receive();
        if (n <= 0) return n;
        off_ = 0;
        len_ = static_cast<std::size_t>(n);
        return take(ptr, size);
    }

    ssize_t receive() {
        ssize_t n;
        do n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
        while (n < 0 && errno == EINTR);
        if (n == 0) client_closed = true;
        return n;
    }

    void end(int status, std::string why) {
        ended_ = true;
        cut = {status, std::move(why)};
    }

    // Polls for `events` until `until`, in slices; a reading wait gives up
    // once the server is stopped, a writing one write_time_after_stop later.
    Wait wait_for(short events, Clock::time_point until, bool reading, short& revents) const {
        bool stop_seen = false;
        for (;;) {
            // Before each slice, not only after an idle one: a client that
            // sends a byte every few milliseconds must not outlast a stop.
            if (stopped() && !stop_seen) {
                if (reading) return Wait::stopped;
                stop_seen = true;
                until = std::min(until, Clock::now() + write_time_after_stop);
            }
            const Clock::time_point now = Clock::now();
            if (now >= until) return Wait::timeout;
            const auto left = std::chrono::duration_cast<milliseconds>(until - now) + milliseconds(1);
            pollfd p{fd_, events, 0};
            const int r = ::poll(&p, 1, static_cast<int>(std::min(left, stop_check).count()));
            if (r > 0) {
                revents = p.revents;
                return Wait::ready;
            }
            if (r < 0 && errno != EINTR) return Wait::failed;
        }
    }

    bool stopped() const { return listener_.load() == INVALID_SOCKET; }

    ssize_t take(char* ptr, std::size_t size) {
        const std::size_t n = std::min(size, len_ - off_);
        std::memcpy(ptr, buffer_.data() + off_, n);
        off_ += n;
        return static_cast<ssize_t>(n);
    }

    static std::string seconds_text(milliseconds d) { return fmt::format("{:g}", static_cast<double>(d.count()) / 1000); }

    template <class GetName>
    void address(GetName get_name, std::string& ip, int& port) const {
        sockaddr_storage addr{};
        socklen_t len = sizeof addr;
        ip.clear();
        port = 0;
        if (get_name(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
        char host[NI_MAXHOST], serv[NI_MAXSERV];
        if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                          NI_NUMERICHOST | NI_NUMERICSERV) != 0)
            return;
        ip = host;
        port = std::atoi(serv);
    }

    socket_t fd_;
    const std::atomic<socket_t>& listener_;  // INVALID_SOCKET once the server stopped
    milliseconds read_timeout_, write_timeout_, request_timeout_;
    Clock::time_point deadline_ = Clock::time_point::max();
    bool ended_ = false;  // the request was cut short: reads see its end
    bool in_head_ = true;   // reading the request's line and headers
    bool started_ = false;  // a byte of the request line came (empty lines before it are skipped)
    std::size_t head_bytes_ = 0, line_bytes_ = 0;
    char last_ = 0;
    std::vector<char> buffer_ = std::vector<char>(16 * 1024);
    std::size_t off_ = 0, len_ = 0;  // buffer_[off_, len_) is read and not yet taken
};

// The stream of the connection this thread serves, for the handlers.
thread_local ConnectionStream* current_stream = nullptr;

// Connections each get a thread: `n_kept` made at start and kept, more made
// while connections wait for one, up to `n_most`; those end after a few
// seconds without work, and are detached, so that their stacks go when they
// end (joined, they stayed until the next connection came).
class ConnectionThreads final : public httplib::TaskQueue {
public:
    ConnectionThreads(int n_kept, int n_most) : n_most_(std::max(n_kept, n_most)) {
        const std::lock_guard<std::mutex> lock(m_);
        for (int i = 0; i < n_kept; ++i) {
            kept_.emplace_back([this] { work(true); });
            ++n_threads_;
        }
    }
    ~ConnectionThreads() override { shutdown(); }

    void enqueue(std::function<void()> fn) override {
        const std::lock_guard<std::mutex> lock(m_);
        jobs_.push_back(std::move(fn));
        if (static_cast<std::size_t>(n_idle_) < jobs_.size() && n_threads_ < n_most_) {
            try {
                std::thread([this] { work(false); }).detach();
                ++n_threads_;
            } catch (const std::system_error&) {
                // No thread to be had now: the connection waits for one.
            }
        }
        cv_.notify_one();
    }

    // Serves what was accepted, then waits for every thread to end.
    void shutdown() override {
        std::vector<std::thread> kept;
        {
            std::unique_lock<std::mutex> lock(m_);
            stopping_ = true;
            cv_.notify_all();
            kept.swap(kept_);
        }
        for (std::thread& t : kept) t.join();
        std::unique_lock<std::mutex> lock(m_);
        ended_.wait(lock, [this] { return n_threads_ == 0; });
    }

private:
    void work(bool kept) {
        std::unique_lock<std::mutex> lock(m_);
        for (;;) {
            const auto has_work = [this] { return stopping_ || !jobs_.empty(); };
            ++n_idle_;
            bool woken = true;
            if (kept) cv_.wait(lock, has_work);
            else woken = cv_.wait_for(lock, extra_thread_idle, has_work);
            --n_idle_;
            if (jobs_.empty() && (stopping_ || !woken)) break;
            std::function<void()> job = std::move(jobs_.front());
            jobs_.pop_front();
            lock.unlock();
            job();
            job = nullptr;
            lock.lock();
        }
        // The last this thread touches of the pool: shutdown() may destroy it
        // once the lock is let go.
        --n_threads_;
        ended_.notify_all();
    }

    const int n_most_;
    std::mutex m_;
    std::condition_variable cv_, ended_;
    std::deque<std::function<void()>> jobs_;
    std::vector<std::thread> kept_;
    int n_threads_ = 0, n_idle_ = 0;
    bool stopping_ = false;
};

}  // namespace

ConnectionServer::ConnectionServer(ConnectionLimits limits) : limits_(limits) {
    new_task_queue = [n_kept = limits.n_kept, n_most = limits.n_most] {
        return new ConnectionThreads(n_kept, n_most);
    };
}

RequestCut ConnectionServer::request_cut_short() { return current_stream ? current_stream->cut : RequestCut{}; }

void ConnectionServer::close_after_this() {
    if (current_stream) current_stream->close_after = true;
}

bool ConnectionServer::process_and_close_socket(socket_t sock) {
    bool ok = false;
    {
        ConnectionStream stream(sock, svr_sock_, as_ms(read_timeout_sec_, read_timeout_usec_),
                                as_ms(write_timeout_sec_, write_timeout_usec_), limits_.request_timeout);
        current_stream = &stream;
        bool idle = false;  // ended waiting for a request: nothing unread, no answer on its way
        for (std::size_t left = keep_alive_max_count_; left > 0; --left) {
            if (!stream.await_request(std::chrono::seconds(keep_alive_timeout_sec_))) {
                idle = true;
                break;
            }
            stream.begin_request();
            bool client_closes = false;  // the request said "Connection: close"
            ok = process_request(stream, left == 1, client_closes, nullptr);
            stream.end_request();
            if (!ok || client_closes || stream.close_after || stream.cut.status != 0) break;
        }
        current_stream = nullptr;
        // A lingering close: closed with bytes unread, or with bytes still
        // coming, the connection is reset, and the client's kernel drops the
        // answers it holds that the client has not read yet. Sending side
        // first; the client closes its own once it has read them.
        ::shutdown(sock, SHUT_WR);
        if (!idle) stream.drain(linger_time);
    }
    ::close(sock);
    return ok;
}

}  // namespace sixstep::server
