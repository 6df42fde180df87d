// ConnectionServer: cpp-httplib's server with sixstep's own loop over each
// connection. cpp-httplib still parses every request and routes it; what
// changes is how bytes come off the socket, how long a request may take to
// arrive, and how many connections get a thread.
//
// What Debian's cpp-httplib (0.11.4) did, and what this does instead:
// - It read each request through a stream of its own, so bytes of a second
//   request sent before the first was answered (pipelining) were lost with
//   the first request's stream, and that request never answered. Here one
//   stream lives as long as its connection and keeps what it read ahead.
// - Before each write it peeked at the socket and took a read that ends for
//   a client gone, so a client that sent its request and then closed its
//   sending side (`shutdown(SHUT_WR)`, `nc -N`) got no answer. Here a write
//   waits for room and only a socket error says the client is gone; a client
//   that closed both sides is noticed at the write after its close.
// - Each read waited up to the read timeout anew, so a client sending a
//   byte every few seconds held its thread for ever. Here a request's line,
//   headers and body must all arrive within request_timeout of its first
//   byte, and a request cut short by either limit is answered 408 by the
//   error handler (request_cut_short() says why) and its connection closed.
//   Its line and headers are held to 64 KiB (431): cpp-httplib kept a line
//   of any length.
// - It dropped what it could not parse in a head: a header line with no
//   colon, one with whitespace before its colon ("Content-Length : 36"),
//   any line ending in a bare LF; and it read a chunk's size with strtoul
//   ("0x37" was 55, "-5" 2^64 - 5). A proxy in front may read such bytes
//   otherwise, so a body became a request of its own. Here each is refused
//   400 as it arrives (RFC 9112, 5.1 and 7.1), as is an HTTP/1.1 request
//   without exactly one Host (3.2), and the connection closed.
// - It closed a connection at once, with what the client had sent since
//   unread, so the kernel reset it, and answers not yet taken from the
//   client's side were lost (pipelined ones, a stream before a refused
//   request). Here the server closes its sending side first and drops what
//   still comes for up to 2 s, till the client closes too.
// - Its thread pool was fixed, so as many slow clients as threads kept
//   everyone else out. Here the pool keeps `n_kept` threads and grows, while
//   connections wait, up to `n_most`; a thread it added ends after a few
//   idle seconds.
//
// Every wait is cut into slices that look at whether stop() was called, so
// a connection in the middle of a request does not hold the shutdown up
// (503). Empty lines before a request line are skipped (RFC 9112, 2.2).
//
//     ConnectionServer s({.request_timeout = 30s, .n_kept = 72, .n_most = 1024});
//     s.set_read_timeout(10, 0);  s.set_write_timeout(10, 0);   // as for httplib::Server
#pragma once
#include <chrono>
#include <string>

#include <httplib.h>

namespace sixstep::server {

struct ConnectionLimits {
    std::chrono::milliseconds request_timeout{30'000};  // first byte to the body's end
    int n_kept = 8;     // threads the pool keeps, made at start
    int n_most = 1024;  // threads it may grow to while connections wait
};

// Why a request stopped being read before its end, for its answer.
struct RequestCut {
    int status = 0;   // 0: it was not; 408 too slow, 431 a line or head too long, 503 the server stopping
    std::string why;  // "the request did not arrive whole within 30 s of its first byte"
};

class ConnectionServer final : public httplib::Server {
public:
    explicit ConnectionServer(ConnectionLimits limits);

    // Asked from a handler, on the thread that serves the request: whether
    // the request being read was cut short, and why.
    static RequestCut request_cut_short();
    // Closes the connection once the answer is written: bytes after this
    // request cannot be trusted to start the next one.
    static void close_after_this();

private:
    bool process_and_close_socket(socket_t sock) override;
    ConnectionLimits limits_;
};

}  // namespace sixstep::server
