#include "app/server/http_server.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstdint>
#include <sys/socket.h>
#include <ctime>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "app/server/connection_loop.h"
#include "app/server/openai_protocol.h"
#include "pipeline/core/error.h"
#include "pipeline/core/text.h"

namespace sixstep::server {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Token text can in principle hold bytes that are not UTF-8; never let that
// turn a reply into an exception.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_error(httplib::Response& res, const ApiError& e, int retry_after_s = 0) {
    res.status = e.status;
    if (retry_after_s > 0) res.set_header("Retry-After", std::to_string(retry_after_s));
    res.set_content(dump(error_body(e)), "application/json");
}

// Answers `e`, then closes the connection: after a request whose framing
// cannot be trusted, nothing more on the connection can be read as a
// request (RFC 9112, 6.1 and 6.3) — bytes a proxy took for a body would run
// here as a request of their own. The answer says "Connection: close"
// (cpp-httplib takes it from the request's header).
void close_after(const httplib::Request& req) {
    auto& request = const_cast<httplib::Request&>(req);  // the server's own object, handed over as const
    request.headers.erase("Connection");
    request.set_header("Connection", "close");
    ConnectionServer::close_after_this();
}

void send_error_and_close(const httplib::Request& req, httplib::Response& res, const ApiError& e) {
    close_after(req);
    res.body.clear();
    send_error(res, e);
}

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

// The error of a request that ended without its answer: the server shut
// down first (503), or the engine failed (500). None for a finished answer.
std::optional<ApiError> failure_of(const RequestOutcome& o) {
    if (o.stop_reason == llm::StopReason::cancelled)
        return ApiError(503, "server_error", "the server shut down before the answer was complete");
    if (o.stop_reason == llm::StopReason::error) return ApiError(500, "server_error", "the engine failed: " + o.error);
    return std::nullopt;
}

// A streamed answer between calls of the content provider.
struct StreamState {
    std::shared_ptr<RequestStream> stream;
    Endpoint endpoint = Endpoint::completions;
    CompletionResult base;      // id, created, model, prompt tokens
    bool include_usage = false;
    bool first = true;          // no chunk sent yet
    int n_tokens = 0;
    Clock::time_point last_write = Clock::now();
};

// The next piece of an event stream, or "" when nothing happened.
std::string next_events(StreamState& st, const RequestStream::News& news) {
    std::string out;
    st.n_tokens += news.n_tokens;
    if (!news.text.empty()) {
        CompletionResult c = st.base;
        c.text = news.text;
        out += sse(completion_chunk(st.endpoint, c, st.first, st.include_usage));
        st.first = false;
    }
    if (!news.finished) return out;
    const RequestOutcome& o = news.outcome;
    if (const std::optional<ApiError> e = failure_of(o)) {
        out += sse(error_body(*e));
    } else {
        CompletionResult c = st.base;
        c.finish_reason = finish_reason_of(o.stop_reason);
        c.completion_tokens = o.n_generated;
        out += sse(completion_chunk(st.endpoint, c, st.first, st.include_usage));
        if (st.include_usage) out += sse(usage_chunk(st.endpoint, c));
    }
    return out + "data: [DONE]\n\n";
}

// One call of a stream's content provider: waits up to 200 ms for news and
// writes its events; false when the client is gone. While nothing comes
// (queued behind others), a comment every second finds out whether the
// client is still there.
bool write_events(StreamState& st, httplib::DataSink& sink) {
    const RequestStream::News news = st.stream->wait(std::chrono::milliseconds(200));
    std::string out = next_events(st, news);
    if (out.empty() && Clock::now() - st.last_write > std::chrono::seconds(1)) out = ": waiting\n\n";
    if (!out.empty()) {
        if (!sink.write(out.data(), out.size())) return false;  // the client is gone
        st.last_write = Clock::now();
    }
    if (news.finished) sink.done();
    return true;
}

// The whole answer, once the engine has finished it. (A client that leaves
// meanwhile is not noticed until the answer is written; max_tokens bounds the
// waste.)
void answer_whole(httplib::Response& res, Endpoint endpoint, RequestStream& stream, CompletionResult answer) {
    std::string text;
    RequestStream::News news;
    do {
        news = stream.wait(std::chrono::milliseconds(200));
        text += news.text;
    } while (!news.finished);
    const RequestOutcome& o = news.outcome;
    if (const std::optional<ApiError> e = failure_of(o)) {
        send_error(res, *e);
        return;
    }
    answer.text = std::move(text);
    answer.finish_reason = finish_reason_of(o.stop_reason);
    answer.completion_tokens = o.n_generated;
    res.set_content(dump(completion_response(endpoint, answer)), "application/json");
}

// What every chunk or answer of a request repeats: its id, when it was made,
// the model, the prompt's length.
CompletionResult answer_base(Endpoint endpoint, int stream_id, const std::string& model_id, int n_prompt) {
    CompletionResult base;
    base.id = fmt::format("{}-{}", endpoint == Endpoint::chat ? "chatcmpl" : "cmpl", stream_id);
    base.created = static_cast<long long>(std::time(nullptr));
    base.model = model_id;
    base.prompt_tokens = n_prompt;
    return base;
}

// One of the max_concurrent places for a completion, once admit() has taken
// it. Whoever ends the request gives it back: the handler, when this guard
// goes, or after hand_over() the stream's releaser, once the last chunk is out.
class CompletionSlot {
public:
    explicit CompletionSlot(std::atomic<int>& n_active) : n_active_(&n_active) {}
    CompletionSlot(const CompletionSlot&) = delete;
    CompletionSlot& operator=(const CompletionSlot&) = delete;
    ~CompletionSlot() {
        if (n_active_) --*n_active_;
    }
    void hand_over() { n_active_ = nullptr; }

private:
    std::atomic<int>* n_active_;
};

// A header's (first) value in lower case: codings are case-insensitive.
std::string lower_header(const httplib::Request& req, const char* name) {
    return ascii_lower(req.get_header_value(name));
}

// Whether a request says it has a body: a Content-Length, or a chunked
// Transfer-Encoding (the only coding HTTP/1.1 requests may end with; any
// other was refused before routing, by bad_framing).
bool has_body(const httplib::Request& req) {
    return req.has_header("Content-Length") || lower_header(req, "Transfer-Encoding").find("chunked") != std::string::npos;
}

// Whether the request has a body cpp-httplib will not read: it reads one
// for POST, PUT, PATCH and DELETE only.
bool body_left_unread(const httplib::Request& req) {
    static const std::array<const char*, 4> reading = {"POST", "PUT", "PATCH", "DELETE"};
    if (std::find(reading.begin(), reading.end(), req.method) != reading.end()) return false;
    return lower_header(req, "Transfer-Encoding").find("chunked") != std::string::npos ||
           (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

// Reads a request's body to its end, keeping at most `limit` bytes of it.
// cpp-httplib checks its own limit against a Content-Length only: a chunked
// body has none, and a gzip or br body is inflated before it gets here (a
// thousandfold, from a small body). Past the limit the rest is read and dropped, not
// left unread: the next request on the connection starts where this body
// ends, and bytes left behind would be parsed as a request of their own.
struct Body {
    std::string text;
    bool complete = true;    // false: cut short (the client stopped sending, or a malformed chunk),
                             // or, compressed and over the limit, left unread
    bool over = false;       // longer than the limit: `text` holds its first `limit` bytes
    bool multipart = false;  // multipart/form-data: read through, its parts dropped, `text` empty
};
Body read_body(const httplib::Request& req, const httplib::ContentReader& content_reader, std::size_t limit) {
    Body b;
    // A request with neither a Content-Length nor a chunked body has none
    // (RFC 9112, 6.3); cpp-httplib would read one until the client closes.
    if (!has_body(req)) return b;
    if (req.is_multipart_form_data()) {
        b.multipart = true;
        b.complete = content_reader([](const httplib::MultipartFormData&) { return true; },
                                    [](const char*, std::size_t) { return true; });
        return b;
    }
    // A compressed body past the limit is left unread: inflating the rest
    // only to drop it cost 3 s of CPU for 1 MB of gzip that inflates to 1 GB.
    // The connection is then closed (answered_unusable_body).
    const bool compressed = req.has_header("Content-Encoding");
    b.complete = content_reader([&](const char* data, std::size_t n) {
        if (b.over || n > limit - b.text.size()) {
            b.over = true;
            return !compressed;
        }
        b.text.append(data, n);
        return true;
    });
    return b;
}

std::string too_large(const httplib::Request& req, std::size_t limit) {
    return fmt::format("the request body is larger than the limit of {} bytes{}", limit,
                       req.has_header("Content-Encoding") ? " (once decompressed)" : "");
}

// Answers a body that cannot be used: one cut short (400; the error handler
// writes it, 413 when cpp-httplib found it over max_body_bytes) or one over
// the limit (413). Whether it did.
bool answered_unusable_body(const Body& b, const httplib::Request& req, httplib::Response& res, std::size_t limit) {
    if (b.over) {
        const ApiError e(413, error_type_for_status(413), too_large(req, limit));
        if (b.complete)
            send_error(res, e);
        else
            send_error_and_close(req, res, e);  // the rest of the body was left unread
        return true;
    }
    if (!b.complete) {
        if (res.status < 400) res.status = 400;  // a body cut short
        return true;  // the error handler writes the body, and closes: 413 over max_body_bytes, 400 else
    }
    return false;
}

// The method a route answers ("POST" for the completions, "GET" for the
// rest); "" for a path that is no route.
std::string route_method(const std::string& path) {
    if (path == "/v1/completions" || path == "/v1/chat/completions") return "POST";
    if (path == "/v1/models" || (path.rfind("/v1/models/", 0) == 0 && path.size() > 11) || path == "/health" ||
        path == "/metrics")
        return "GET";
    return "";
}

// A request's framing that cannot be trusted: a Content-Length that is not
// a byte count, or two that differ, or one beside a Transfer-Encoding (RFC
// 9112, 6.3: the body's end is then unknown, and a proxy and this server
// could read two different requests); a status and the reason. cpp-httplib
// reads the first Content-Length as an unsigned number: "-5" became 2^64 - 5
// and was read and dropped for 10 s before a 413. A transfer coding other
// than chunked alone ("gzip, chunked") is 501: cpp-httplib reads only
// chunked, and read any other until the client closed or 10 s passed.
// {0, ""} when sound.
std::pair<int, std::string> bad_framing(const httplib::Request& req) {
    if (req.has_header("Transfer-Encoding")) {
        const std::string coding = lower_header(req, "Transfer-Encoding");
        if (req.get_header_value_count("Transfer-Encoding") > 1 || coding != "chunked")
            return {501, fmt::format("Transfer-Encoding: \"{}\" is not supported; send the body as it is, with "
                                     "a Content-Length, or chunked",
                                     coding.substr(0, 40))};
        if (req.has_header("Content-Length"))
            return {400, "Content-Length and Transfer-Encoding together: the body's end is ambiguous; send one"};
    }
    const auto lengths = req.headers.equal_range("Content-Length");
    std::string first;
    for (auto it = lengths.first; it != lengths.second; ++it) {
        const std::string& v = it->second;
        if (v.empty() || v.size() > 19 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return {400, fmt::format("Content-Length: \"{}\" is not a byte count", v.substr(0, 40))};
        if (it != lengths.first && v != first)
            return {400, fmt::format("two Content-Length headers that differ ({} and {})", first, v)};
        first = v;
    }
    return {0, ""};
}

// The Content-Encoding of a request's body when cpp-httplib would not undo
// it (it inflates gzip and deflate); "" when there is none, or one it does.
// cpp-httplib inflates only "gzip" and "deflate" written in lower case,
// which is how the connection's stream hands the value on.
std::string unsupported_coding(const httplib::Request& req) {
    if (!req.has_header("Content-Encoding")) return "";
    const std::string raw = req.get_header_value("Content-Encoding");
    const bool known = req.get_header_value_count("Content-Encoding") == 1 &&
                       (raw == "gzip" || raw == "deflate" || raw == "identity");
    return known ? "" : raw.empty() ? std::string("(empty)") : raw;
}

std::string status_message(const httplib::Request& req, int status, std::size_t max_body) {
    switch (status) {
    case 404: return fmt::format("no such route: {} {}", req.method, req.path);
    case 413: return fmt::format("the request body is larger than the limit of {} bytes", max_body);
    case 400: return "malformed HTTP request, or a body that broke off before its end";
    case 414:
        return fmt::format("the request's path and query are longer than {} bytes", CPPHTTPLIB_REQUEST_URI_MAX_LENGTH);
    default: return fmt::format("HTTP {}", status);
    }
}

// A method the path's route does not take: 405 with Allow (RFC 9110), not
// 404; a path that is no route: 404.
ApiError wrong_method_error(const httplib::Request& req, httplib::Response& res, std::size_t max_body) {
    const std::string allowed = route_method(req.path);
    if (allowed.empty()) return ApiError(404, error_type_for_status(404), status_message(req, 404, max_body));
    res.set_header("Allow", allowed);
    return ApiError(405, "invalid_request_error",
                    fmt::format("{} {} is not allowed; use {}", req.method, req.path, allowed));
}

}  // namespace

HttpServer::HttpServer(ServingEngine& engine, const llm::TextCodec& codec, HttpServerParams params)
    : engine_(engine), codec_(codec), params_(std::move(params)) {
    if (params_.max_concurrent < 1 || params_.max_concurrent > max_concurrent_limit)
        throw Error(fmt::format("max concurrent {}: use 1 to {}", params_.max_concurrent, max_concurrent_limit));
    if (params_.request_timeout_s < 1) throw Error(fmt::format("request timeout {} s: use 1 or more", params_.request_timeout_s));
    if (params_.port < 0 || params_.port > 65535) throw Error(fmt::format("port {}: use 0..65535", params_.port));
    if (params_.model_id.empty()) throw Error("the server needs a model id");
    // A client that vanished must cost an error code on write, not the process.
    std::signal(SIGPIPE, SIG_IGN);

    // Threads kept for every allowed completion plus the cheap routes and
    // the quick 503s beyond the limit; more while connections wait, so slow
    // clients do not keep the rest out (connection_loop.h).
    const int n_kept = params_.max_concurrent + 8;
    http_ = std::make_unique<ConnectionServer>(
        ConnectionLimits{.request_timeout = std::chrono::seconds(params_.request_timeout_s),
                         .n_kept = n_kept,
                         .n_most = std::max(n_kept, max_connection_threads)});
    httplib::Server& s = *http_;
    s.set_payload_max_length(params_.max_body_bytes);
    s.set_read_timeout(params_.read_timeout_s, 0);
    s.set_write_timeout(params_.write_timeout_s, 0);
    s.set_keep_alive_timeout(5);
    // Requests on one connection before it is closed (cpp-httplib's 5 cut a
    // pipeline of six short; nginx's is 1000).
    s.set_keep_alive_max_count(1000);
    s.set_tcp_nodelay(true);  // a token is a few bytes: send it now
    // Debian's libcpp-httplib listens with a backlog of 5: a burst of clients
    // (64 connecting at once) overflows it, and their retransmitted handshakes
    // can arrive after the keep-alive wait, which closes them unanswered. Keep
    // the listening socket so bind() can raise its backlog.
    s.set_socket_options([this](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        listen_fd_ = static_cast<int>(sock);
    });

    s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        // No byte ranges here: RFC 9110 lets a server ignore Range, and
        // cpp-httplib applied one to every answer, a JSON body or an error
        // cut to "{\"error\":{\"" with 206. The request is the server's own
        // non-const object, handed over as const.
        auto& request = const_cast<httplib::Request&>(req);
        request.ranges.clear();
        // An HTTP/1.0 request without "Connection: Keep-Alive" (spelt as
        // cpp-httplib checks it) is the connection's last, but cpp-httplib
        // says so only for "Connection: close": its answer said
        // "Keep-Alive: timeout=5, max=1000" and then the connection closed.
        if (req.version == "HTTP/1.0" && req.get_header_value("Connection") != "Keep-Alive") close_after(req);
        if (const auto [status, why] = bad_framing(req); status != 0) {
            // The body's end is unknown: answered, and the connection closed.
            send_error_and_close(req, res, ApiError(status, error_type_for_status(status), why));
            return httplib::Server::HandlerResponse::Handled;
        }
        // A body coded in a way cpp-httplib does not undo (zstd) was read as
        // it came and parsed as JSON: 415 (RFC 9110, 15.5.16), unread, closed.
        // The coding arrives in lower case, "x-gzip" as "gzip" (connection_loop.cpp).
        if (const std::string coding = unsupported_coding(req); !coding.empty()) {
            send_error_and_close(req, res,
                                 ApiError(415, "invalid_request_error",
                                          fmt::format("Content-Encoding: \"{}\" is not supported; send the body as "
                                                      "it is, or gzip or deflate it",
                                                      coding.substr(0, 40))));
            return httplib::Server::HandlerResponse::Handled;
        }
        // TRACE and CONNECT: methods cpp-httplib parses and routes nowhere,
        // answered 400 "malformed HTTP request". As any other method a route
        // does not take: 405 with Allow on a route, else 404; a body is left
        // unread, and the connection closed.
        if (req.method == "TRACE" || req.method == "CONNECT") {
            const ApiError e = wrong_method_error(req, res, params_.max_body_bytes);
            if (has_body(req)) send_error_and_close(req, res, e);
            else send_error(res, e);
            return httplib::Server::HandlerResponse::Handled;
        }
        // A body sent with a method cpp-httplib reads no body for (GET,
        // HEAD, OPTIONS): its bytes would be parsed as the next request. The
        // request is answered, then the connection closed.
        if (body_left_unread(req)) close_after(req);
        // An expectation the server cannot meet: 417 (RFC 9110, 10.1.1),
        // before the body, which is left unread. cpp-httplib meets
        // "100-continue" and ignored any other, so a client waiting on one
        // waited for nothing.
        if (req.has_header("Expect")) {
            const std::string expect = lower_header(req, "Expect");
            // An empty value expects nothing (RFC 9110's list may be empty).
            const bool met = expect.empty() || expect == "100-continue";
            if (!met || req.get_header_value_count("Expect") != 1) {
                send_error_and_close(req, res,
                                     ApiError(417, "invalid_request_error",
                                              fmt::format("Expect: \"{}\" cannot be met; the only expectation this "
                                                          "server meets is 100-continue",
                                                          req.get_header_value("Expect").substr(0, 40))));
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    // "Expect: 100-continue" asks whether to send the body (RFC 9110,
    // 10.1.1). cpp-httplib said "100 Continue" to every request, before any
    // check ran, so a body that would be refused unread (over the limit, to
    // a route that refuses its method, with framing that cannot be trusted)
    // was invited and thrown away. Those are refused now, before the body;
    // the connection is closed, as the body's bytes may still come.
    s.set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
        std::optional<ApiError> refusal;
        if (const auto [status, why] = bad_framing(req); status != 0) {
            refusal = ApiError(status, error_type_for_status(status), why);
        } else if (req.has_header("Content-Length") &&
                   std::stoull(req.get_header_value("Content-Length")) > params_.max_body_bytes) {
            refusal = ApiError(413, error_type_for_status(413), status_message(req, 413, params_.max_body_bytes));
        } else if (const std::string allowed = route_method(req.path);
                   allowed != req.method && !(allowed == "GET" && req.method == "HEAD")) {
            refusal = wrong_method_error(req, res, params_.max_body_bytes);
        }
        if (!refusal) return 100;
        send_error_and_close(req, res, *refusal);
        return refusal->status;
    });
    s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty() || res.content_provider_) return;  // a handler's own answer
        // A request that stopped arriving, took too long to, had a line too
        // long, or met the server stopping: whatever cpp-httplib made of
        // what came, its own status, and closed.
        // A body over the limit keeps its 413, though its tail was cut.
        const RequestCut cut = ConnectionServer::request_cut_short();
        if (cut.status != 0 && res.status != 413) {
            // A 503 here is the server stopping: typed as every other
            // shutdown refusal (server_error), not as an overload.
            const std::string type = cut.status == 503 ? "server_error" : error_type_for_status(cut.status);
            send_error_and_close(req, res, ApiError(cut.status, type, cut.why));
            return;
        }
        const ApiError e(res.status, error_type_for_status(res.status),
                         status_message(req, res.status, params_.max_body_bytes));
        // cpp-httplib's own refusals before routing (400: a request it could
        // not parse, a body cut short; 414: a path too long; 416) and its
        // 500s leave the body unread: its bytes would be the next request.
        if (cut.status != 0 || res.status == 400 || res.status == 414 || res.status == 416 || res.status >= 500)
            send_error_and_close(req, res, e);
        else
            send_error(res, e);
    });
    s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        send_error(res, ApiError(500, "server_error", "internal error: " + what));
    });

    s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        if (shutting_down_) {
            send_error(res, ApiError(503, "server_error", "shutting down"));
            return;
        }
        res.set_content(R"({"status":"ok"})", "application/json");
    });
    s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(engine_.metrics().prometheus_text(engine_.now_ms()), "text/plain; version=0.0.4");
    });
    const auto model_object = [this] {
        return json{{"id", params_.model_id},
                    {"object", "model"},
                    {"created", 0},
                    {"owned_by", "sixstep"},
                    {"max_model_len", engine_.n_ctx()}};
    };
    s.Get("/v1/models", [model_object](const httplib::Request&, httplib::Response& res) {
        res.set_content(dump({{"object", "list"}, {"data", json::array({model_object()})}}), "application/json");
    });
    // OpenAI's "retrieve model" (client.models.retrieve(id)).
    s.Get(R"(/v1/models/(.+))", [this, model_object](const httplib::Request& req, httplib::Response& res) {
        const std::string id = req.matches[1];
        if (id != params_.model_id) {
            send_error(res, ApiError(404, "not_found_error",
                                     fmt::format("the model '{}' does not exist; this server serves '{}'",
                                                 elide(id, 120), params_.model_id),
                                     "model", "model_not_found"));
            return;
        }
        res.set_content(dump(model_object()), "application/json");
    });

    // The completion routes read their bodies themselves. cpp-httplib's own
    // reading parses a body whose Content-Type is
    // application/x-www-form-urlencoded — what `curl -d` sends unless told
    // otherwise — as a form, and refuses one over 8 KiB with a 413 that
    // blames max_body_bytes. Here every body is the JSON it should be,
    // whatever its Content-Type says; max_body_bytes still applies.
    const auto completion = [this](Endpoint endpoint) {
        return [this, endpoint](const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader& content_reader) {
            serve_completion(endpoint, req, res, content_reader);
        };
    };
    s.Post("/v1/completions", completion(Endpoint::completions));
    s.Post("/v1/chat/completions", completion(Endpoint::chat));
    // Every other method on a route that exists: 405 with Allow (RFC 9110),
    // not 404. A method with a body goes to one handler for every path, after
    // the completions: it reads the body itself, within max_body_bytes and
    // to its end (cpp-httplib's own reading kept a chunked or gzip body of
    // any size whole, 1.2 GB for 512 MiB sent chunked to POST /v1/models).
    const auto answer_wrong_method = [this](const httplib::Request& req, httplib::Response& res) {
        send_error(res, wrong_method_error(req, res, params_.max_body_bytes));
    };
    s.Get("/v1/completions", answer_wrong_method);
    s.Get("/v1/chat/completions", answer_wrong_method);
    const auto with_body = [this, answer_wrong_method](const httplib::Request& req, httplib::Response& res,
                                                       const httplib::ContentReader& content_reader) {
        const Body read = read_body(req, content_reader, params_.max_body_bytes);
        if (answered_unusable_body(read, req, res, params_.max_body_bytes)) return;
        answer_wrong_method(req, res);
    };
    s.Post(".*", with_body);
    s.Put(".*", with_body);
    s.Patch(".*", with_body);
    s.Delete(".*", with_body);
    s.Options(".*", answer_wrong_method);
}

// ---- the completion routes -------------------------------------------------------------

// POST /v1/completions and /v1/chat/completions, from the request's body to
// the answer. A step that refuses the request has written the refusal into
// `res`; the handler then only returns.
void HttpServer::serve_completion(Endpoint endpoint, const httplib::Request& req, httplib::Response& res,
                                  const httplib::ContentReader& content_reader) {
    const Body read = read_body(req, content_reader, params_.max_body_bytes);
    if (read.multipart) {
        send_error(res, ApiError(400, "invalid_request_error",
                                 "the body is multipart/form-data; send one JSON object "
                                 "(Content-Type: application/json)"));
        return;
    }
    if (answered_unusable_body(read, req, res, params_.max_body_bytes)) return;
    if (!admit(res)) return;
    CompletionSlot slot(n_active_);

    CompletionRequest cr;
    EngineRequest er;
    try {
        cr = parse_completion_request(read.text, endpoint, params_.model_id);
        er = engine_request(cr, endpoint);
    } catch (const ApiError& e) {
        send_error(res, e);
        return;
    }
    const int n_prompt = static_cast<int>(er.prompt.size());
    const std::shared_ptr<RequestStream> stream = submit(std::move(er), res);
    if (!stream) return;

    const CompletionResult base = answer_base(endpoint, stream->id(), params_.model_id, n_prompt);
    if (!cr.stream) {
        answer_whole(res, endpoint, *stream, base);
        return;
    }
    slot.hand_over();
    stream_answer(req, res, endpoint, stream, base, cr.include_usage);
}

// Takes one of the max_concurrent places for a completion; false, with a 503
// and Retry-After in `res`, while shutting down or when every place is taken.
bool HttpServer::admit(httplib::Response& res) {
    if (shutting_down_) {
        engine_.metrics().on_rejected("shutting_down");
        send_error(res, ApiError(503, "server_error", "the server is shutting down"), params_.retry_after_s);
        return false;
    }
    if (++n_active_ > params_.max_concurrent) {
        --n_active_;
        engine_.metrics().on_rejected("overloaded");
        send_error(res,
                   ApiError(503, "server_overloaded",
                            fmt::format("{} requests are being served, the most at once; retry later",
                                        params_.max_concurrent)),
                   params_.retry_after_s);
        return false;
    }
    return true;
}

// What the engine is asked for: the prompt and max_tokens, both checked, the
// sampling and stop texts as sent, and a fresh seed when the client gave
// none. Throws ApiError.
EngineRequest HttpServer::engine_request(const CompletionRequest& cr, Endpoint endpoint) const {
    EngineRequest er;
    er.prompt = checked_prompt(cr, endpoint);
    er.max_tokens = checked_max_tokens(cr, endpoint, static_cast<int>(er.prompt.size()));
    er.sampling = cr.sampling;
    if (!cr.has_seed) er.sampling->seed = std::random_device{}();
    er.stop = cr.stop;
    return er;
}

// The prompt as token ids (a text is encoded): not empty, each id in the
// vocabulary, and short enough to leave room for an answer. Throws ApiError.
std::vector<int> HttpServer::checked_prompt(const CompletionRequest& cr, Endpoint endpoint) const {
    const char* prompt_param = endpoint == Endpoint::chat ? "messages" : "prompt";
    // A text certain to fill the context is refused before it is encoded: a
    // 1 MB prompt cost 35 MB and a quarter of a second of CPU to be refused.
    if (const std::size_t per_token = codec_.max_token_bytes(); cr.prompt_tokens.empty() && per_token > 0) {
        const std::size_t at_least = (cr.prompt_text.size() + per_token - 1) / per_token;
        if (at_least >= static_cast<std::size_t>(engine_.n_ctx()))
            throw ApiError(400, "invalid_request_error",
                           fmt::format("the prompt is {} bytes, so at least {} tokens (one holds at most {} bytes); "
                                       "this model's context holds {} in all, leaving no room for an answer",
                                       cr.prompt_text.size(), at_least, per_token, engine_.n_ctx()),
                           prompt_param, "context_length_exceeded");
    }
    std::vector<int> tokens = cr.prompt_tokens.empty() ? codec_.encode(cr.prompt_text) : cr.prompt_tokens;
    const int n_prompt = static_cast<int>(tokens.size());
    if (n_prompt == 0) throw ApiError(400, "invalid_request_error", "the prompt is empty", "prompt");
    for (int i = 0; i < n_prompt; ++i)
        if (tokens[static_cast<std::size_t>(i)] >= engine_.n_vocab())
            throw ApiError(400, "invalid_request_error",
                           fmt::format("prompt[{}]: token id {} is outside the vocabulary (0..{})", i,
                                       tokens[static_cast<std::size_t>(i)], engine_.n_vocab() - 1),
                           "prompt");
    if (engine_.n_ctx() - n_prompt < 1)
        throw ApiError(400, "invalid_request_error",
                       fmt::format("the prompt is {}; this model's context holds {} in all, leaving no room for "
                                   "an answer",
                                   count_of(static_cast<std::size_t>(n_prompt), "token", "tokens"), engine_.n_ctx()),
                       prompt_param, "context_length_exceeded");
    return tokens;
}

// max_tokens as asked, or its default (16 for a completion); never more than
// the context leaves after the prompt. Throws ApiError.
int HttpServer::checked_max_tokens(const CompletionRequest& cr, Endpoint endpoint, int n_prompt) const {
    const int room = engine_.n_ctx() - n_prompt;
    // Whatever the context leaves, and the KV pool can hold: chat's default,
    // and the cap on a completion's 16 (a 50-token prompt on a 64-position
    // pool was refused as too long, though 14 tokens of answer fit).
    const int room_default = static_cast<int>(
        std::max<long long>(1, std::min<long long>(room, engine_.n_pool_positions() - n_prompt)));
    const int max_tokens =
        cr.max_tokens.value_or(endpoint == Endpoint::completions ? std::min(16, room_default) : room_default);
    const std::string& field = cr.max_tokens_field;
    if (max_tokens > room)
        throw ApiError(400, "invalid_request_error",
                       fmt::format("prompt {} tokens + {} {} exceed the context of {} tokens; ask for at most {}",
                                   n_prompt, field, max_tokens, engine_.n_ctx(), room),
                       field, "context_length_exceeded");
    // The KV cache a request may come to hold: every position but the last
    // token's (it is sampled, never attended to). The engine refused one
    // past its pool too, but in its own words: "request 3: … (--kv-blocks)".
    const long long pool = engine_.n_pool_positions();
    if (n_prompt + static_cast<long long>(max_tokens) - 1 > pool) {
        // A default of 1 past the pool: the prompt alone is too long.
        if (!cr.max_tokens)
            throw ApiError(400, "invalid_request_error",
                           fmt::format("the prompt is {} tokens, more than this server's KV cache holds ({} "
                                       "positions in all)",
                                       n_prompt, pool),
                           endpoint == Endpoint::chat ? "messages" : "prompt", "context_length_exceeded");
        throw ApiError(400, "invalid_request_error",
                       fmt::format("prompt {} tokens + {} {} need more KV cache than this server holds ({} positions "
                                   "in all); ask for at most {}",
                                   n_prompt, field, max_tokens, pool, std::max<long long>(0, pool - n_prompt + 1)),
                       field, "context_length_exceeded");
    }
    return max_tokens;
}

// The engine's stream for the request; null when the engine refused it, the
// refusal in `res`: 429 when its queue is full, 503 when it is shutting down
// (both with Retry-After), 400 for anything else.
std::shared_ptr<RequestStream> HttpServer::submit(EngineRequest er, httplib::Response& res) {
    Submission sub = engine_.submit(std::move(er));
    if (sub.stream) return sub.stream;
    if (sub.refusal == "queue_full")
        send_error(res, ApiError(429, "rate_limit_error", sub.message), params_.retry_after_s);
    else if (sub.refusal == "shutting_down")
        send_error(res, ApiError(503, "server_error", sub.message), params_.retry_after_s);
    else
        send_error(res, ApiError(400, "invalid_request_error", sub.message));
    return nullptr;
}

// The answer as server-sent events, which cpp-httplib writes after the
// handler has returned, one call of write_events at a time. Its releaser runs
// when the stream ends, whole or not: it cancels a request whose client went
// away (its KV blocks go back) and gives back the place admit() took.
void HttpServer::stream_answer(const httplib::Request& req, httplib::Response& res, Endpoint endpoint,
                               std::shared_ptr<RequestStream> stream, const CompletionResult& base,
                               bool include_usage) {
    auto st = std::make_shared<StreamState>();
    st->stream = std::move(stream);
    st->endpoint = endpoint;
    st->base = base;
    st->include_usage = include_usage;
    res.set_header("Cache-Control", "no-cache");
    auto provider = [st](std::size_t, httplib::DataSink& sink) { return write_events(*st, sink); };
    auto releaser = [this, st](bool) {
        if (!st->stream->finished()) engine_.cancel(st->stream->id());
        --n_active_;
    };
    // HTTP/1.0 has no chunked coding (RFC 9112, 6.1): the events go as they
    // are, and closing the connection ends them.
    if (req.version == "HTTP/1.0") {
        close_after(req);
        res.set_content_provider("text/event-stream", std::move(provider), std::move(releaser));
    } else {
        res.set_chunked_content_provider("text/event-stream", std::move(provider), std::move(releaser));
    }
}

HttpServer::~HttpServer() {
    if (http_->is_running()) http_->stop();
}

int HttpServer::bind() {
    int port = params_.port;
    if (port == 0) {
        port = http_->bind_to_any_port(params_.host);
        if (port < 0)
            throw Error(fmt::format("cannot listen on {} (not an address of this machine, or no free port)", params_.host));
    } else if (!http_->bind_to_port(params_.host, port)) {
        throw Error(fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", params_.host,
                                port));
    }
    // listen() again on a listening socket sets its backlog anew (Linux).
    if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
    return port;
}

void HttpServer::listen() { http_->listen_after_bind(); }

void HttpServer::begin_shutdown() { shutting_down_ = true; }

void HttpServer::stop(int wait_ms) {
    shutting_down_ = true;
    const auto until = Clock::now() + std::chrono::milliseconds(wait_ms);
    while (n_active_ > 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    http_->stop();
}

}  // namespace sixstep::server
