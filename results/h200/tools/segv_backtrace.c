/* A SIGSEGV/SIGABRT handler that prints the native stack to stderr, for libraries that
 * crash on a machine without a debugger:
 *   cc -shared -fPIC -O0 -o /tmp/segv.so results/h200/tools/segv_backtrace.c
 *   LD_PRELOAD=/tmp/segv.so python3 ...
 * Frames are named from each library's dynamic symbols (mangled C++ names, offsets). */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void report(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    void *frames[64];
    char line[96];
    int n = backtrace(frames, 64);
    int len = 0;
    const char *head = "native stack at signal ";
    write(2, head, strlen(head));
    /* signal number and faulting address, without stdio */
    unsigned long v = (unsigned long)sig;
    char digits[24];
    int d = 0;
    do { digits[d++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (d) line[len++] = digits[--d];
    line[len++] = ' ';
    v = (unsigned long)info->si_addr;
    line[len++] = '0'; line[len++] = 'x';
    for (int shift = 60; shift >= 0; shift -= 4)
        line[len++] = "0123456789abcdef"[(v >> shift) & 15];
    line[len++] = '\n';
    write(2, line, len);
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = report;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
}
