// The main of every doctest binary: doctest's own, plus a backtrace on a
// fatal signal.
//
// Why: the off-screen UI tests have ended in SIGSEGV about once in ten CI runs
// (Mesa's software rasterizer under load), never under a debugger, and doctest
// alone reports only the signal and the test case. So every test binary
// prints, on SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, the faulting thread,
// address, the call stack and the executable mappings of the process (to
// resolve an address later: `addr2line -f -C -e <file> <address - start +
// offset>`), then dies of the same signal, so the run still fails.
//
// Order: doctest installs its own handler around each test case and, when it
// fires, restores the handler it found (this one), reports the test case (not
// its CAPTURE()d values), and raises the signal again. The raised signal
// reaches this handler as soon as doctest's returns, still on the faulting
// thread and with the faulting frames below it, so the backtrace follows
// doctest's report. Outside a test case (static destructors, a driver's
// thread after the last case) this handler is the only one.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <iterator>

#include <execinfo.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[std::size(kFatalSignals)];
volatile sig_atomic_t g_reporting = 0;

// Only async-signal-safe calls from here on: write(2), open/read/close,
// snprintf into a local buffer (glibc's does not allocate for these formats),
// backtrace_symbols_fd (writes, no malloc), and backtrace(), which was called
// once at startup so that libgcc's unwinder is already loaded.
void write_str(const char* s) {
    for (size_t n = std::strlen(s); n > 0;) {
        ssize_t w = ::write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= static_cast<size_t>(w);
    }
}

// The lines of /proc/self/maps whose permissions have x: the test binary and
// the shared libraries (swrast_dri.so, libGLX, ...) with their load addresses.
void write_executable_maps() {
    int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char chunk[4096];
    char line[1024];
    size_t len = 0;
    for (ssize_t r; (r = ::read(fd, chunk, sizeof chunk)) > 0;) {
        for (ssize_t i = 0; i < r; ++i) {
            if (len < sizeof line - 1) line[len++] = chunk[i];
            if (chunk[i] != '\n') continue;
            // "start-end perms offset dev inode path": perms follow the first space.
            const char* space = static_cast<const char*>(std::memchr(line, ' ', len));
            if (space && space + 3 < line + len && space[3] == 'x') {
                line[len] = '\0';
                write_str(line);
            }
            len = 0;
        }
    }
    ::close(fd);
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
    if (!g_reporting) {  // a second thread faulting at once, or a fault in here: just die
        g_reporting = 1;
        char head[256];
        std::snprintf(head, sizeof head, "\n=== fatal signal SIG%s in thread %ld",
                      sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", static_cast<long>(::syscall(SYS_gettid)));
        write_str(head);
        // From the kernel (si_code > 0), the address that faulted; after doctest's
        // report the signal is doctest's raise() and carries none.
        if (info && info->si_code > 0) {
            std::snprintf(head, sizeof head, ", fault address %p", info->si_addr);
            write_str(head);
        }
        write_str("; backtrace, innermost first:\n");
        void* frames[128];
        int n = backtrace(frames, static_cast<int>(std::size(frames)));
        backtrace_symbols_fd(frames, n, STDERR_FILENO);
        write_str("=== executable mappings (start-end perms offset dev inode file):\n");
        write_executable_maps();
        write_str("=== end of crash report\n");
    }
    // Hand the signal on: to the handler found at startup (another tool's), or
    // the default action, which ends the process with this signal.
    for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
        if (kFatalSignals[i] != sig) continue;
        const struct sigaction& prev = g_previous[i];
        if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
            prev.sa_sigaction(sig, info, context);
            return;
        }
        if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
            prev.sa_handler(sig);
            return;
        }
    }
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // delivered when this handler returns (a fault re-executes and faults again)
}

void install_crash_report() {
    void* warm[1];
    backtrace(warm, 1);  // loads libgcc_s now: dlopen is not safe inside a signal handler
    // A stack of its own for the handler, so a stack overflow is reported too.
    static char alt_stack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    ::sigaltstack(&ss, nullptr);
    struct sigaction sa{};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kFatalSignals); ++i) ::sigaction(kFatalSignals[i], &sa, &g_previous[i]);
}

}  // namespace

int main(int argc, char** argv) {
    install_crash_report();
    doctest::Context context(argc, argv);
    return context.run();
}
