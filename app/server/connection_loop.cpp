#include "app/server/connection_loop.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cctype>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pipeline/core/text.h"

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
// One header line, CRLF included: Debian's cpp-httplib is a compiled library
// built with its default, and a longer line failed as "malformed" (400; an
// 8 KiB bearer token, a big cookie). Said as what it is instead: 431.
constexpr std::size_t max_header_line_bytes = CPPHTTPLIB_HEADER_MAX_LENGTH;
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
        line_.clear();
        passed_on_.reset();
        held_.clear();
        held_at_ = 0;
        request_line_read_ = http11_ = chunked_ = false;
        n_hosts_ = 0;
        body_ = BodyPart::none;
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
    // size lines) a byte at a time, and its body in blocks: the head is
    // checked line by line as it comes, and so is a chunked body's framing.
    // Each line of the head is held back until it ends, as it may be
    // rewritten (an absolute-form target, request_line(); a header's value,
    // header_line()), then handed on a byte at a time.
    ssize_t read(char* ptr, std::size_t size) override {
        for (;;) {
            if (held_at_ < held_.size()) {
                *ptr = held_[held_at_++];
                return 1;
            }
            const ssize_t n = next(ptr, size);
            if (n <= 0) return release_line(ptr, n);
            if (!in_head_) return body_bytes(ptr, n, size);
            if (n != 1 || size != 1) return n;  // not how cpp-httplib reads a head
            const char c = *ptr;
            // Empty lines before a request line are skipped (RFC 9112, 2.2).
            if (!started_ && (c == '\r' || c == '\n')) continue;
            started_ = true;
            if (++head_bytes_ > max_head_bytes) {
                end(431, fmt::format("the request's line and headers are longer than {} KiB", max_head_bytes / 1024));
                return release_line(ptr, 0);
            }
            if (c != '\n') {
                line_ += c;
                if (request_line_read_ && line_.size() + 1 > max_header_line_bytes) {
                    end(431, fmt::format("a header line is longer than {} KiB, the longest this server reads",
                                         max_header_line_bytes / 1024));
                    return release_line(ptr, 0);
                }
                continue;  // held back till its end
            }
            // The request ends here, to the parser, when a line is refused:
            // it answers 400 and the error handler gives the reason. A
            // refused line goes to it as it came, without its LF.
            std::string as_sent = line_;
            passed_on_.reset();
            held_ = !head_line_ends() ? std::move(as_sent) : passed_on_ ? *passed_on_ + "\r\n" : std::string();
            held_at_ = 0;
        }
    }

    // The request stopped arriving (a timeout, the client's close, a stop,
    // a refusal) in a line of its head: the part held back goes to
    // cpp-httplib, which answers a request it cannot parse; with nothing it
    // would close the connection without an answer. Otherwise `n`, what the
    // read gave.
    ssize_t release_line(char* ptr, ssize_t n) {
        if (line_.empty()) return n;
        held_.swap(line_);
        line_.clear();
        held_at_ = 1;
        *ptr = held_[0];
        return 1;
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

    // ---- the head, a line at a time --------------------------------------------------
    //
    // cpp-httplib is lenient where leniency lets a request be read two ways
    // (RFC 9112, 11.2): it drops a header line with no colon, a header whose
    // name has whitespace before its colon ("Content-Length : 36" was
    // ignored, so its body was read as the next request), and any line that
    // ends in a bare LF. A proxy may read each of them otherwise; here they
    // are refused, and the connection closed.

    // A line of the head ended (line_ holds it, without its LF); false when
    // it is refused, the reason in `cut`. Else passed_on_ is what cpp-httplib
    // is to read of it, without its CRLF (nothing: the line is dropped).
    bool head_line_ends() {
        std::string line;
        line.swap(line_);
        if (line.empty() || line.back() != '\r') return refuse("a line of the request's head ends in a bare LF; "
                                                                "end each line with CRLF");
        line.pop_back();
        if (!request_line_read_) {
            request_line_read_ = true;
            // Its last word is the version; cpp-httplib checks the rest.
            http11_ = line.size() > 9 && line.compare(line.size() - 9, 9, " HTTP/1.1") == 0;
            if (!request_line(line)) return false;
            passed_on_ = std::move(line);
            return true;
        }
        if (!line.empty()) return header_line(line);
        passed_on_ = "";
        // The empty line: the head is whole. HTTP/1.1 needs exactly one Host
        // (RFC 9112, 3.2).
        if (http11_ && n_hosts_ == 0) return refuse("an HTTP/1.1 request needs a Host header");
        if (http11_ && n_hosts_ > 1) return refuse("a request with more than one Host header");
        in_head_ = false;
        body_ = BodyPart::none;
        if (chunked_) start_size_line();
        return true;
    }

    // A method cpp-httplib does not know, in a request line of the right
    // shape, is 501 (RFC 9110, 15.6.2); cpp-httplib answered 400
    // "malformed". A target in absolute-form ("POST http://host/v1/models"),
    // which a server must accept (RFC 9112, 3.2.2), is rewritten to the
    // origin-form cpp-httplib routes ("POST /v1/models"): it routed the whole
    // URL, and answered 404. Any other line is cpp-httplib's to judge.
    bool request_line(std::string& line) {
        static constexpr std::array<std::string_view, 10> known = {"GET",     "HEAD",    "POST",  "PUT",   "DELETE",
                                                                   "CONNECT", "OPTIONS", "TRACE", "PATCH", "PRI"};
        const std::size_t first = line.find(' '), last = line.rfind(' ');
        if (first == std::string::npos || first == 0 || first == last || line.compare(last + 1, 7, "HTTP/1.") != 0)
            return true;
        const std::string_view method(line.data(), first);
        if (std::all_of(method.begin(), method.end(), is_token_char) &&
            std::find(known.begin(), known.end(), method) == known.end())
            return refuse(fmt::format("the method {} is not supported", printable_cut(method, 40)), 501);
        const std::string_view target(line.data() + first + 1, last - first - 1);
        const std::size_t scheme_end = target.find("://");
        if (scheme_end == std::string_view::npos ||
            !(same_text(target.substr(0, scheme_end), "http") || same_text(target.substr(0, scheme_end), "https")))
            return true;
        // The authority runs to the path, the query or the end; the Host
        // header is then ignored (ibid.): this server answers any host.
        const std::size_t authority = scheme_end + 3, path = std::min(target.find_first_of("/?#", authority), target.size());
        if (path == authority) return refuse(fmt::format("the request's target {} names no host", printable_cut(target, 80)));
        std::string origin(target.substr(path));
        if (origin.empty() || origin.front() != '/') origin.insert(0, "/");  // "http://host" or "http://host?q"
        line = fmt::format("{} {}{}", method, origin, line.substr(last));
        return true;
    }

    bool header_line(const std::string& line) {
        if (line.front() == ' ' || line.front() == '\t')
            return refuse("a header line begins with whitespace (obsolete line folding is not accepted)");
        const std::size_t colon = line.find(':');
        if (colon == std::string::npos)
            return refuse(fmt::format("a header line has no colon: \"{}\"", printable_cut(line, 80)));
        const std::string_view name(line.data(), colon);
        if (name.empty()) return refuse("a header line has no name before its colon");
        if (name.find_first_of(" \t") != std::string_view::npos)
            return refuse(fmt::format("the header \"{}\" has whitespace in its name or before its colon",
                                      printable_cut(name, 80)));
        if (!std::all_of(name.begin(), name.end(), is_token_char))
            return refuse(fmt::format("the header name \"{}\" holds a character a name cannot hold",
                                      printable_cut(name, 80)));
        std::string_view value(line);
        value.remove_prefix(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
        if (same_text(name, "host")) ++n_hosts_;
        // Any other coding is refused before the body is read (http_server.cpp).
        if (same_text(name, "transfer-encoding") && same_text(value, "chunked")) chunked_ = true;
        passed_on_ = line;
        if (same_text(name, "expect")) {
            // Its value is case-insensitive (RFC 9110, 10.1.1), but
            // cpp-httplib sends the interim "100 Continue" only for
            // "100-continue" as written: to "100-Continue" it sent nothing,
            // and a client waited (curl a second) before sending the body.
            // An HTTP/1.0 request's expectation must be ignored (ibid.).
            if (!http11_) passed_on_.reset();
            else passed_on_ = fmt::format("{}: {}", name, ascii_lower(value));
        } else if (same_text(name, "content-encoding")) {
            // Codings are case-insensitive, and "x-gzip" is gzip (RFC 9110,
            // 8.4.1): cpp-httplib inflates only "gzip" and "deflate" as
            // written, and http_server.cpp refused the rest with 415.
            std::string coding = ascii_lower(value);
            if (coding == "x-gzip") coding = "gzip";
            passed_on_ = fmt::format("{}: {}", name, coding);
        }
        return true;
    }

    // ---- a chunked body's framing ---------------------------------------------------
    //
    // cpp-httplib reads a chunk's size with strtoul: "0x37" was 55, "-5"
    // was 2^64 - 5 (read for the 10 s timeout, then 408), "5junk" was 5.
    // Here a size line is hex digits, optionally a ';' and an extension, and
    // CRLF (RFC 9112, 7.1); a chunk's data ends with CRLF; anything else is
    // refused as it arrives. The parts are followed as cpp-httplib reads
    // them: size lines and the CRLFs a byte at a time, data in blocks.

    ssize_t body_bytes(const char* ptr, ssize_t n, std::size_t size) {
        if (body_ == BodyPart::none) return n;
        if (body_ == BodyPart::data) {
            const std::uint64_t got = std::min(static_cast<std::uint64_t>(n), chunk_left_);
            chunk_left_ -= got;
            if (chunk_left_ == 0) body_ = BodyPart::data_end;
            return n;
        }
        if (n != 1 || size != 1) {  // not read as a chunked body after all: not followed
            body_ = BodyPart::none;
            return n;
        }
        return framing_byte(*ptr) ? 1 : 0;
    }

    // One byte of a size line, of the CRLF after a chunk's data, or of the
    // line after the last chunk; false when refused.
    bool framing_byte(char c) {
        if (body_ == BodyPart::data_end || body_ == BodyPart::last_line) {
            const bool last = body_ == BodyPart::last_line;
            if (c == (line_bytes_ == 0 ? '\r' : '\n')) {
                if (line_bytes_++ == 1) {
                    body_ = BodyPart::none;
                    if (!last) start_size_line();
                }
                return true;
            }
            return refuse(last ? "trailer fields after the last chunk are not supported"
                               : "a chunk's data is longer than its size line says (no CRLF after it)");
        }
        // The size line.
        if (++line_bytes_ > max_head_bytes)
            return refuse(fmt::format("a chunk's size line is longer than {} KiB", max_head_bytes / 1024), 431);
        const bool was_cr = size_line_cr_;
        size_line_cr_ = c == '\r';
        if (c == '\n') {
            if (!was_cr) return refuse("a chunk's size line ends in a bare LF; end it with CRLF");
            if (n_size_digits_ == 0) return refuse("a chunk's size line has no size");
            body_ = chunk_left_ == 0 ? BodyPart::last_line : BodyPart::data;
            line_bytes_ = 0;  // counts the CRLF after the data, or the line after the last chunk
            return true;
        }
        if (was_cr) return refuse("a CR in a chunk's size line not followed by LF");
        if (c == '\r' || in_extension_) return true;
        if (size_line_.size() < 40) size_line_ += c;
        const int digit = hex_value(c);
        if (digit >= 0 && !after_size_) {
            if (n_size_digits_++ == 0) chunk_left_ = 0;
            if (chunk_left_ >> 56 != 0) return refuse("a chunk's size is too large");
            chunk_left_ = chunk_left_ * 16 + static_cast<std::uint64_t>(digit);
            return true;
        }
        if (n_size_digits_ > 0 && (c == ' ' || c == '\t')) {  // BWS before the ';'
            after_size_ = true;
            return true;
        }
        if (n_size_digits_ > 0 && c == ';') {
            in_extension_ = true;
            return true;
        }
        return refuse(fmt::format("a chunk's size must be hex digits, then optionally ';' and an extension: "
                                  "\"{}\" is not",
                                  printable_cut(size_line_, 40)));
    }

    void start_size_line() {
        body_ = BodyPart::size_line;
        line_bytes_ = 0;
        chunk_left_ = 0;
        n_size_digits_ = 0;
        after_size_ = in_extension_ = size_line_cr_ = false;
        size_line_.clear();
    }

    // Ends the request with `status` (400 unless told) and false.
    bool refuse(std::string why, int status = 400) {
        end(status, std::move(why));
        return false;
    }

    static int hex_value(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }
    // RFC 9110, 5.6.2: what a token (a header's name) may hold.
    static bool is_token_char(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
    }
    static bool same_text(std::string_view a, std::string_view lower) {
        return a.size() == lower.size() && std::equal(a.begin(), a.end(), lower.begin(), [](char x, char y) {
                   return std::tolower(static_cast<unsigned char>(x)) == y;
               });
    }

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
    std::string line_;                // the head's line being read, without its LF
    bool request_line_read_ = false;  // the head's first line came
    bool http11_ = false;             // the request line says HTTP/1.1
    // The line that ended, as cpp-httplib is to read it (head_line_ends).
    std::optional<std::string> passed_on_;
    std::string held_;                // bytes held back for cpp-httplib, from held_at_ on
    std::size_t held_at_ = 0;
    int n_hosts_ = 0;                 // Host headers
    bool chunked_ = false;            // "Transfer-Encoding: chunked"
    // Where a chunked body is: a size line, data (chunk_left_ bytes to come),
    // the CRLF after the data, the line after the last chunk; none when the
    // body is not chunked, or has ended.
    enum class BodyPart { none, size_line, data, data_end, last_line };
    BodyPart body_ = BodyPart::none;
    std::uint64_t chunk_left_ = 0;  // on a size line: the size so far
    int n_size_digits_ = 0;
    bool after_size_ = false, in_extension_ = false, size_line_cr_ = false;
    std::string size_line_;  // the size line so far, its first 40 bytes, for a refusal
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
