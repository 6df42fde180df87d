#include "app/server/load_generator.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "app/server/client_watchdog.h"
#include "app/server/openai_protocol.h"
#include "pipeline/core/error.h"
#include "pipeline/core/measure.h"
#include "pipeline/core/progress.h"
#include "pipeline/core/text.h"
#include "pipeline/serving/arrivals.h"
#include "pipeline/serving/percentiles.h"
#include "pipeline/serving/workload.h"

namespace sixstep::server {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

ServerUrl parse_server_url(const std::string& url, UrlGiven given) {
    // Named as the caller gave it, at most 120 bytes of it (a megabyte of
    // host is possible).
    const auto fail = [&](std::string_view why) {
        const std::string shown = url.substr(0, 120);
        return Error(given == UrlGiven::option ? fmt::format("--url {}: {}", shown, why)
                                               : fmt::format("url \"{}\": {}", shown, why));
    };
    const std::size_t scheme = url.find("://");
    if (scheme == std::string::npos || url.substr(0, scheme) != "http")
        throw fail("use http://HOST:PORT (https is not supported)");
    // What a URL may hold and this client does not take, named: each was
    // reported as a bad port ("http://user:pw@127.0.0.1:1", "…:8080?x=1").
    if (std::any_of(url.begin(), url.end(), [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; }))
        throw fail("a URL holds no spaces or control characters");
    if (url.find('#') != std::string::npos) throw fail("a fragment (#...) is not supported");
    if (url.find('?') != std::string::npos) throw fail("a query (?...) is not supported");
    const std::size_t slash = url.find('/', scheme + 3);
    if (url.find('@', scheme + 3) < slash) throw fail("a user name or password (user:pw@) is not supported");
    ServerUrl u;
    u.origin = url.substr(0, slash);
    if (u.origin.size() <= scheme + 3) throw fail("no host");
    // HOST[:PORT] checked here: the HTTP client parses it with std::regex,
    // which overflows the stack on a megabyte of host and throws a bare
    // "stoi" on a port past int.
    const std::string host_port = u.origin.substr(scheme + 3);
    // An IPv6 address comes in brackets, as `serve --host ::1` prints it:
    // http://[::1]:8080.
    const bool v6 = !host_port.empty() && host_port.front() == '[';
    const std::size_t close = v6 ? host_port.find(']') : 0;
    if (v6 && close == std::string::npos) throw fail("an IPv6 address needs its closing bracket: http://[::1]:8080");
    const std::size_t colon = host_port.find(':', close);
    const std::string host = host_port.substr(0, colon), port = colon == std::string::npos ? "" : host_port.substr(colon + 1);
    const auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-'; };
    const auto v6_char = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; };
    const bool host_ok = v6 ? close == host.size() - 1 && host.size() > 2 && host.size() <= 47 &&
                                  std::all_of(host.begin() + 1, host.end() - 1, v6_char)
                            : !host.empty() && host.size() <= 253 && std::all_of(host.begin(), host.end(), name_char);
    if (!host_ok)
        throw fail("the host must be a name or IPv4 address of at most 253 letters, digits, '.' or '-', or an IPv6 "
                   "address in brackets ([::1])");
    const bool port_ok = colon == std::string::npos ||
                         (!port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                          std::stoi(port) >= 1 && std::stoi(port) <= 65535);
    if (!port_ok) throw fail("the port must be a number from 1 to 65535");
    std::string path = slash == std::string::npos ? "" : url.substr(slash);
    while (!path.empty() && path.back() == '/') path.pop_back();
    u.base = path.size() >= 3 && path.substr(path.size() - 3) == "/v1" ? path : path + "/v1";
    return u;
}

const serving::LatencyMetric& LoadReport::latency(const std::string& key) const {
    for (const auto& m : latencies)
        if (m.key == key) return m;
    throw Error(fmt::format("the load report has no latency '{}'", key));
}

const serving::Metric& LoadReport::total(const std::string& key) const {
    for (const auto& m : totals)
        if (m.key == key) return m;
    throw Error(fmt::format("the load report has no figure '{}'", key));
}

namespace {


// The message of an OpenAI-style error object ({"message": "…"}); any
// other shape is shown whole, cut to a line ({"message": 5} threw a bare
// json type_error).
std::string error_message(const json& e) {
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    return elide(e.dump(-1, ' ', false, json::error_handler_t::replace), 300);
}

// The longest server-sent event taken: a token's chunk is a few hundred
// bytes, and a server that never ends one would otherwise fill memory.
constexpr std::size_t max_event_bytes = 1 << 20;

// Reads a server-sent event stream as it comes, in any split.
struct SseReader {
    std::string buffer;
    bool done = false;
    std::string error;
    // Returns the text of each data event's choice (may be empty), calling
    // on_text for events with text.
    template <class OnText, class OnUsage>
    void feed(const char* data, std::size_t n, OnText on_text, OnUsage on_usage) {
        for (std::size_t i = 0; i < n; ++i)
            if (data[i] != '\r') buffer += data[i];
        std::size_t end;
        while ((end = buffer.find("\n\n")) != std::string::npos) {
            const std::string event = buffer.substr(0, end);
            buffer.erase(0, end + 2);
            std::size_t pos = 0;
            while (pos <= event.size()) {
                std::size_t nl = event.find('\n', pos);
                if (nl == std::string::npos) nl = event.size();
                const std::string line = event.substr(pos, nl - pos);
                pos = nl + 1;
                if (line.rfind("data:", 0) != 0) continue;  // comments, event names
                std::string payload = line.substr(5);
                if (!payload.empty() && payload[0] == ' ') payload.erase(0, 1);
                if (payload == "[DONE]") {
                    done = true;
                    continue;
                }
                json j;
                try {
                    j = json::parse(payload);
                } catch (const json::exception& e) {
                    // Not only bad syntax: a number no double holds (1e400) too.
                    error = fmt::format("a stream event that is not valid JSON ({}): {}", json_error_words(e),
                                        payload.substr(0, 80));
                    continue;
                }
                if (j.contains("error")) {
                    error = "error event: " + error_message(j["error"]);
                    continue;
                }
                if (j.contains("usage") && j["usage"].is_object()) on_usage(j["usage"]);
                if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) continue;
                const json& c = j["choices"][0];
                std::string text;
                if (c.contains("text") && c["text"].is_string()) text = c["text"].get<std::string>();
                if (c.contains("delta") && c["delta"].is_object() && c["delta"].contains("content") &&
                    c["delta"]["content"].is_string())
                    text = c["delta"]["content"].get<std::string>();
                if (!text.empty()) on_text(text);
            }
        }
        if (buffer.size() > max_event_bytes && error.empty())
            error = fmt::format("a stream event longer than {} bytes", max_event_bytes);
    }
};

// The HTTP client's error as a sentence ("Connection" alone says little).
std::string describe(httplib::Error e) {
    switch (e) {
    case httplib::Error::Connection: return "no connection (refused, or no server at that address)";
    case httplib::Error::ConnectionTimeout: return "no connection within the time limit";
    case httplib::Error::Read: return "the connection broke or stalled while reading the answer";
    case httplib::Error::Write: return "the connection broke while sending the request";
    case httplib::Error::BindIPAddress: return "cannot use that local address";
    case httplib::Error::Canceled: return "cancelled";
    default: return httplib::to_string(e);
    }
}

// GET /v1/models: a list of a few models, a few hundred bytes each.
constexpr std::size_t max_models_bytes = 1 << 20;
constexpr auto models_deadline = std::chrono::seconds(15);

std::string first_model(const ServerUrl& u) {
    httplib::Client cli(u.origin);
    cli.set_connection_timeout(5, 0);
    cli.set_read_timeout(10, 0);
    std::string body;
    bool too_long = false;
    ClientWatchdog dog;
    const ClientWatchdog::Watch watch = dog.watch(cli, Clock::now() + models_deadline);
    watch.track_sockets(cli);  // Ctrl+C ends a connect in progress too
    auto r = cli.Get(u.base + "/models", [&](const char* data, std::size_t n) {
        too_long = n > max_models_bytes - std::min(body.size(), max_models_bytes);
        if (!too_long) body.append(data, n);
        return !too_long;
    });
    throw_if_cancelled();
    if (watch.outcome() == ClientWatchdog::Outcome::late)
        throw Error(fmt::format("GET {}{}/models: no whole answer within {} s", u.origin, u.base, models_deadline.count()));
    if (too_long)
        throw Error(fmt::format("GET {}{}/models: the answer is longer than {} bytes", u.origin, u.base, max_models_bytes));
    if (!r) throw Error(fmt::format("cannot reach {}: {}", u.origin, describe(r.error())));
    if (r->status != 200) throw Error(fmt::format("GET {}/models answered HTTP {}", u.base, r->status));
    const json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.contains("data") || !j["data"].is_array() || j["data"].empty() ||
        !j["data"][0].contains("id") || !j["data"][0]["id"].is_string())
        throw Error(fmt::format("GET {}/models did not list a model; pass --model", u.base));
    return j["data"][0]["id"].get<std::string>();
}

void send_one(const ServerUrl& u, const LoadParams& p, const std::string& model, const std::string& prompt,
              Clock::time_point t0, ClientWatchdog& dog, LoadRequest& out) {
    json body = {{"model", model},
                 {"max_tokens", p.max_tokens},
                 {"temperature", p.temperature},
                 {"stream", true},
                 {"stream_options", {{"include_usage", true}}}};
    if (p.chat)
        body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
    else
        body["prompt"] = prompt;

    httplib::Client cli(u.origin);
    const auto timeout = std::chrono::duration<double>(p.timeout_s);
    // The timeout bounds connecting too: a listener whose accept queue is
    // full held a request of --timeout 0.5 for the 5 s connection timeout.
    cli.set_connection_timeout(
        std::chrono::duration_cast<std::chrono::microseconds>(std::min<std::chrono::duration<double>>(timeout, std::chrono::seconds(5))));
    cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    httplib::Request req;
    req.method = "POST";
    req.path = u.base + (p.chat ? "/chat/completions" : "/completions");
    req.headers = {{"Accept", "text/event-stream"}};
    req.body = body.dump();
    req.set_header("Content-Type", "application/json");
    int status = 0;
    std::string error_body;
    SseReader sse;
    long long usage_output = -1, usage_prompt = 0;
    req.response_handler = [&](const httplib::Response& r) {
        status = r.status;
        return true;
    };
    // More text chunks than tokens asked for is a server that does not stop
    // (a token's bytes may come in two chunks at most, as a character split).
    const std::size_t max_chunks = 2 * static_cast<std::size_t>(p.max_tokens) + 16;
    bool too_many_chunks = false;
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
        if (cancel_requested()) return false;  // Ctrl+C: hang up; run_load says why
        if (status != 200) {
            error_body.append(data, std::min<std::size_t>(n, 300 - std::min<std::size_t>(300, error_body.size())));
            return true;
        }
        if (!sse.error.empty() || too_many_chunks) return false;  // nothing more to learn from it
        sse.feed(
            data, n,
            [&](const std::string&) {
                if (out.chunk_ms.size() < max_chunks) out.chunk_ms.push_back(ms_since(t0));
                else too_many_chunks = true;
            },
            [&](const json& usage) {
                // Read wide: a count past 2^31 must not wrap into a small one.
                const auto count = [](const json& v) -> long long {
                    if (v.is_number_unsigned()) return static_cast<long long>(std::min<std::uint64_t>(v.get<std::uint64_t>(), INT64_MAX));
                    return v.get<std::int64_t>();
                };
                if (usage.contains("completion_tokens") && usage["completion_tokens"].is_number_integer())
                    usage_output = count(usage["completion_tokens"]);
                if (usage.contains("prompt_tokens") && usage["prompt_tokens"].is_number_integer())
                    usage_prompt = count(usage["prompt_tokens"]);
            });
        return sse.error.empty() && !too_many_chunks;
    };
    out.sent_ms = ms_since(t0);
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    bool sent = false;
    ClientWatchdog::Outcome stopped = ClientWatchdog::Outcome::running;
    const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
    {
        const ClientWatchdog::Watch watch = dog.watch(cli, deadline);
        watch.track_sockets(cli);  // a connect in progress is ended at the deadline, or at Ctrl+C
        sent = cli.send(req, res, err);
        stopped = watch.outcome();
    }
    out.done_ms = ms_since(t0);
    // Failed at the deadline is a timeout, whoever noticed first: the
    // client's own read or connection timeout often ended the request a
    // few ms before the watchdog looked ("the connection broke or stalled").
    if (stopped == ClientWatchdog::Outcome::late || (!sent && stopped == ClientWatchdog::Outcome::running &&
                                                     Clock::now() >= deadline)) {
        out.error = fmt::format("timeout: still open after {:g} s", p.timeout_s);
    } else if (too_many_chunks) {
        out.error = fmt::format("the server streamed more than {} text chunks for max_tokens {}", max_chunks,
                                p.max_tokens);
    } else if (!sse.error.empty()) {
        out.error = sse.error;
    } else if (!sent) {
        out.error = "connection: " + describe(err);
    } else if (status != 200) {
        const json j = json::parse(error_body, nullptr, false);
        const std::string why = !j.is_discarded() && j.is_object() && j.contains("error") ? error_message(j["error"])
                                                                                           : error_body;
        out.error = fmt::format("HTTP {}: {}", status, why);
    } else if (!sse.done) {
        out.error = "the stream ended without [DONE]";
    } else if (usage_output > p.max_tokens || usage_output < -1) {
        // More tokens than were asked for is a server that miscounts; taken
        // as told, a huge count made the figures allocate per token (8 GiB
        // for 2^31) and report absurd throughputs.
        out.error = fmt::format("the server reported {} completion tokens for max_tokens {}", usage_output,
                                p.max_tokens);
    } else if (usage_prompt < 0 || usage_prompt > max_load_tokens) {
        out.error = fmt::format("the server reported {} prompt tokens", usage_prompt);
    } else {
        out.ok = true;
    }
    out.n_output = usage_output >= 0 ? static_cast<int>(std::min<long long>(usage_output, p.max_tokens))
                                     : static_cast<int>(out.chunk_ms.size());
    out.n_prompt = static_cast<int>(std::clamp<long long>(usage_prompt, 0, max_load_tokens));
}

void make_figures(LoadReport& r, const LoadParams& p, int n_late) {
    std::vector<double> ttft, tpot, itl, e2e;
    double first_sent = -1, last_done = 0;
    long long n_out = 0, n_in = 0;
    int n_ok = 0, n_no_text = 0;
    for (const LoadRequest& q : r.requests) {
        if (q.sent_ms >= 0 && (first_sent < 0 || q.sent_ms < first_sent)) first_sent = q.sent_ms;
        last_done = std::max(last_done, q.done_ms);
        n_ok += q.ok;
        // Answered, but with no text (the first token ended it): no time to
        // a first token to count. It was counted failed, with no reason
        // given and exit 0.
        n_no_text += q.ok && q.chunk_ms.empty();
        if (!q.ok || q.chunk_ms.empty()) continue;
        // The serving lab's definitions, on the client's clock.
        serving::RequestRecord rec;
        rec.arrival_ms = q.sent_ms;
        rec.first_token_ms = q.chunk_ms.front();
        rec.finish_ms = q.chunk_ms.back();
        rec.token_ms = q.chunk_ms;
        rec.output.resize(static_cast<std::size_t>(std::max(1, q.n_output)));
        ttft.push_back(serving::ttft_ms(rec));
        e2e.push_back(serving::e2e_ms(rec));
        if (serving::tpot_ms(rec) >= 0) tpot.push_back(serving::tpot_ms(rec));
        for (std::size_t i = 1; i < q.chunk_ms.size(); ++i) itl.push_back(q.chunk_ms[i] - q.chunk_ms[i - 1]);
        n_out += q.n_output;
        n_in += q.n_prompt;
    }
    const double duration_ms = first_sent >= 0 ? last_done - first_sent : 0;
    const double s = duration_ms / 1000;
    const auto per_s = [&](double x) { return s > 0 ? x / s : 0; };
    r.latencies = {
        {"ttft", "TTFT", "client side: first streamed chunk with text - request sent", serving::summarize(ttft)},
        {"tpot", "TPOT", "(E2E - TTFT) / (output tokens - 1), per request; first token excluded", serving::summarize(tpot)},
        {"itl", "ITL", "every gap between streamed text chunks, pooled over requests", serving::summarize(itl)},
        {"e2e", "E2E latency", "request sent -> last text chunk received", serving::summarize(e2e)},
    };
    const int n = static_cast<int>(r.requests.size());
    r.totals = {
        {"requests", "requests sent", "", "requests the run sent", static_cast<double>(n)},
        {"completed", "completed", "", "requests whose stream ended with [DONE] and no error", static_cast<double>(n_ok)},
        {"failed", "failed", "", "requests refused (HTTP status), broken, or past the timeout", static_cast<double>(n - n_ok)},
        {"no_text", "completed without text", "", "completed requests whose stream carried no text (the first token ended it): no TTFT",
         static_cast<double>(n_no_text)},
        {"late", "sent late", "", "arrivals that found max_in_flight requests open and waited", static_cast<double>(n_late)},
        {"offered_rate", "offered rate", "req/s", "the Poisson rate asked for", p.rate},
        {"duration", "duration", "s", "first request sent -> last response ended", s},
        {"request_throughput", "request throughput", "req/s", "completed requests / duration", per_s(n_ok)},
        {"output_throughput", "output throughput", "tok/s", "output tokens of completed requests / duration",
         per_s(static_cast<double>(n_out))},
        {"total_throughput", "total token throughput", "tok/s",
         "prompt + output tokens of completed requests / duration (prompt tokens as the server's usage reports them)",
         per_s(static_cast<double>(n_in + n_out))},
    };
}

}  // namespace

std::string first_served_model(const std::string& url) { return first_model(parse_server_url(url)); }

LoadReport run_load(const LoadParams& p) {
    if (!std::isfinite(p.rate) || p.rate < min_rate || p.rate > max_rate)
        throw Error(fmt::format("--rate {}: requests per second, {:g} to {:g}", p.rate, min_rate, max_rate));
    // NaN compares false both ways: it read as "neither was given".
    if (std::isnan(p.duration_s)) throw Error("--duration nan: seconds, a number > 0");
    if ((p.duration_s > 0) == (p.n_requests > 0))
        throw Error("give exactly one of --duration S (> 0) and --requests N (> 0)");
    if (p.duration_s < 0 || p.n_requests < 0) throw Error("--duration and --requests must be positive");
    if (!(p.duration_s <= max_span_ms / 1000))
        throw Error(fmt::format("--duration {}: seconds, at most {:g} (a day)", p.duration_s, max_span_ms / 1000));
    if (p.n_requests > serving::max_request_count)
        throw Error(fmt::format("--requests {}: at most {}", p.n_requests, serving::max_request_count));

    if (p.max_tokens < 1 || p.max_tokens > max_load_tokens)
        throw Error(fmt::format("--max-tokens {}: 1 to {}", p.max_tokens, max_load_tokens));
    if (p.max_in_flight < 1) throw Error(fmt::format("--max-in-flight {}: at least 1", p.max_in_flight));
    // Finite and within a day: inf or 1e300 seconds overflow the client's
    // microsecond timeouts (and were read as "no connection").
    if (!(p.timeout_s >= 0.001 && p.timeout_s <= 86400))
        throw Error(fmt::format("--timeout {}: seconds, 0.001 to 86400", p.timeout_s));
    // NaN or inf would be sent as JSON null, which a server reads as its
    // default temperature: a run that says "temperature nan" and samples at 1.
    if (!(p.temperature >= 0 && std::isfinite(p.temperature)))
        throw Error(fmt::format("--temperature {}: a finite number >= 0", p.temperature));
    const ServerUrl u = parse_server_url(p.url);

    // The arrival times: a count, or as many as fall inside the duration.
    serving::ArrivalParams a;
    a.rate = p.rate;
    a.seed = p.seed;
    if (p.n_requests > 0) {
        a.count = p.n_requests;
    } else {
        // Drawn up front: enough that the duration ends first (ten standard
        // deviations past the mean), and no more than a run may send — a
        // duration that holds more was cut short without a word.
        const double expected = p.rate * p.duration_s;
        const double enough = expected + 10 * std::sqrt(expected) + 10;
        if (enough > serving::max_request_count)
            throw Error(fmt::format("--rate {:g} for --duration {:g} s is about {:.0f} requests; a load test sends at "
                                    "most {} (a shorter duration or a lower rate)",
                                    p.rate, p.duration_s, expected, serving::max_request_count));
        a.count = static_cast<int>(enough);
    }
    serving::check_arrival_params(a);
    std::vector<double> times = serving::arrival_times_ms(a);
    if (p.exact_rate && p.n_requests > 0 && !times.empty() && times.back() > 0) {
        const double scale = p.n_requests * 1000.0 / p.rate / times.back();
        for (double& t : times) t *= scale;
    }
    if (!times.empty() && times.back() > max_span_ms)
        throw Error(fmt::format("--rate {:g}: {} requests would take {:.0f} hours to send; a load test spans at most {:.0f}",
                                p.rate, times.size(), times.back() / 3.6e6, max_span_ms / 3.6e6));
    if (p.duration_s > 0)
        times.erase(std::remove_if(times.begin(), times.end(), [&](double t) { return t >= p.duration_s * 1000; }),
                    times.end());

    const std::vector<std::string>& prompts = p.prompts.empty() ? serving::story_openings() : p.prompts;
    for (std::size_t i = 0; i < prompts.size(); ++i)
        if (invalid_utf8_at(prompts[i]) != std::string::npos)
            throw Error(fmt::format("prompt {} is not UTF-8 text; a JSON request carries UTF-8 only", i + 1));

    LoadReport r;
    r.model = p.model.empty() ? first_model(u) : p.model;
    r.requests.resize(times.size());
    // Clients on threads started up front, at most max_in_flight of them
    // (and no more than the requests): an arrival goes to an idle one, or
    // waits for one and is counted late. One thread per request ran out of
    // threads at high rates and took the process down.
    std::mutex mutex;
    std::condition_variable cv;
    int in_flight = 0, n_late = 0;
    std::deque<std::size_t> handed;  // requests due, in arrival order, not yet taken by a client
    bool done = false;
    const Clock::time_point t0 = Clock::now();
    ClientWatchdog dog;  // before the clients, which it outlives
    const auto client = [&] {
        for (;;) {
            std::size_t i = 0;
            {
                std::unique_lock lock(mutex);
                cv.wait(lock, [&] { return done || !handed.empty(); });
                if (handed.empty()) return;
                i = handed.front();
                handed.pop_front();
            }
            // Whatever a server answers, a request ends as a result, never as
            // an exception on a thread (which would abort the process).
            try {
                send_one(u, p, r.model, prompts[i % prompts.size()], t0, dog, r.requests[i]);
            } catch (const std::exception& e) {
                r.requests[i].ok = false;
                r.requests[i].error = e.what();
            }
            std::lock_guard lock(mutex);
            --in_flight;
            cv.notify_all();
        }
    };
    std::vector<std::thread> clients;
    const auto stop_clients = [&] {
        {
            std::lock_guard lock(mutex);
            done = true;
        }
        cv.notify_all();
        for (std::thread& t : clients) t.join();
    };
    const std::size_t n_clients = std::min<std::size_t>(static_cast<std::size_t>(p.max_in_flight), times.size());
    try {
        for (std::size_t k = 0; k < n_clients; ++k) clients.emplace_back(client);
    } catch (const std::system_error& e) {
        stop_clients();
        throw Error(fmt::format("cannot start {} client threads ({} started): {}; lower --max-in-flight", n_clients,
                                clients.size(), e.what()));
    }
    // Ctrl+C (progress.h) ends the test at once: no more arrivals, the
    // streams in flight hang up, and the caller gets Cancelled rather than a
    // report of requests that failed because the test was stopped.
    constexpr auto poll = std::chrono::milliseconds(50);
    for (std::size_t i = 0; i < times.size() && !cancel_requested(); ++i) {
        try {
            report_progress("load test: requests sent", i, times.size());  // the window's progress line
        } catch (const Cancelled&) {
            break;  // the clients stop first; thrown again below
        }
        const Clock::time_point due = t0 + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double, std::milli>(times[i]));
        while (Clock::now() < due && !cancel_requested()) std::this_thread::sleep_until(std::min(due, Clock::now() + poll));
        std::unique_lock lock(mutex);
        if (in_flight >= p.max_in_flight) ++n_late;
        while (!cv.wait_for(lock, poll, [&] { return in_flight < p.max_in_flight; }))
            if (cancel_requested()) break;
        if (cancel_requested()) break;
        ++in_flight;
        r.requests[i].scheduled_ms = times[i];
        handed.push_back(i);
        cv.notify_all();
    }
    stop_clients();
    throw_if_cancelled();
    make_figures(r, p, n_late);
    return r;
}

}  // namespace sixstep::server
