// A wall clock moved by HABITSYNC_CLOCK_OFFSET seconds, for `scripts/test-clock` (issue 62):
// preloaded into the test run, and so into every server, PostgreSQL and PgBouncer it starts.
//
// Only the readings of the wall clock move (clock_gettime's CLOCK_REALTIME family,
// gettimeofday, time, timespec_get); monotonic clocks, timers and timed waits are the kernel's.
// Debian's libfaketime 0.9.10 also wraps timers and waits, and under it Swift's `Task.sleep`
// never returned (its absolute monotonic timerfd deadline is converted as if it were a wall
// clock's) and PostgreSQL's statement_timeout and lock_timeout never fired (SIGALRM lands in
// libfaketime's epoll_wait wrapper, where the handler reads the real time and sets the alarm
// again): what it would have proven is the tool, not the suite.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long offset;
static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_gettimeofday)(struct timeval *, void *);

// Read once, before main: the readers below may run in a signal handler, where getenv and
// dlsym are not safe. Programs under HABITSYNC_CLOCK_KEEP (the Swift toolchain: `swift test`
// itself, and the `swift build` some tests run) keep the real clock: SwiftPM and clang compare
// file times with the present, and under a moved one their caches fail to load.
__attribute__((constructor)) static void moved_clock_init(void) {
    const char *text = getenv("HABITSYNC_CLOCK_OFFSET");
    offset = text ? strtoll(text, NULL, 10) : 0;
    const char *keep = getenv("HABITSYNC_CLOCK_KEEP");
    char program[4096];
    ssize_t length = readlink("/proc/self/exe", program, sizeof program - 1);
    if (keep && *keep && length > 0) {
        program[length] = 0;
        if (strncmp(program, keep, strlen(keep)) == 0) offset = 0;
    }
    real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    real_gettimeofday = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
}

static int is_wall_clock(clockid_t clock) {
    return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_TAI;
}

int clock_gettime(clockid_t clock, struct timespec *now) {
    int result = real_clock_gettime(clock, now);
    if (result == 0 && is_wall_clock(clock)) now->tv_sec += offset;
    return result;
}

int gettimeofday(struct timeval *now, void *zone) {
    int result = real_gettimeofday(now, zone);
    if (result == 0) now->tv_sec += offset;
    return result;
}

time_t time(time_t *out) {
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return (time_t)-1;
    if (out) *out = now.tv_sec;
    return now.tv_sec;
}

int timespec_get(struct timespec *now, int base) {
    if (base != TIME_UTC || clock_gettime(CLOCK_REALTIME, now) != 0) return 0;
    return base;
}
