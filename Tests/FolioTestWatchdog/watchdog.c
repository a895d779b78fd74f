// A deadline for the whole test process. A test that waits forever (for a process, a socket, a lock) would otherwise
// hold CI until its own time limit ends it, with nothing said of where. Past the deadline the watchdog prints the
// processes the tests started that still run and every thread's stack (by gdb, when it is installed), then ends the
// process with status 70, so that the run fails at once and says where it stood.
//
// It also makes standard output line-buffered, so that what a test printed reaches a pipe as it is printed.

#include "FolioTestWatchdog.h"

#include <errno.h>
#include <pthread.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long deadline_seconds = 1800;

long folio_test_watchdog_deadline(void) { return deadline_seconds; }

static void *folio_test_watchdog(void *unused) {
    (void)unused;
    struct timespec left = {.tv_sec = deadline_seconds, .tv_nsec = 0};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
    int pid = (int)getpid();
    fflush(stdout);
    fprintf(stderr, "\nThe test process %d ran past its deadline of %ld s (FOLIO_TEST_DEADLINE): a test waits forever.\n",
            pid, deadline_seconds);
    char command[512];
    snprintf(command, sizeof command,
             "if command -v gdb >/dev/null; then echo 'Its threads:'; "
             "timeout 120 gdb -p %d -batch -nx -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)|ptrace' "
             "| (command -v swift-demangle >/dev/null && swift-demangle --simplified || cat) | cut -c1-300; fi; "
             "echo 'The processes it started that still run:'; ps -o pid,etime,args --ppid %d",
             pid, pid);
    fflush(stderr);
#ifdef __linux__
    // gdb, a descendant, may attach even where Yama allows tracing only by ancestors.
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    if (system(command) != 0) {
        fprintf(stderr, "(the report's command failed)\n");
    }
    fprintf(stderr, "The test process %d stops now.\n", pid);
    fflush(stderr);
    _exit(70);
    return NULL;
}

__attribute__((constructor)) static void folio_test_watchdog_start(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *text = getenv("FOLIO_TEST_DEADLINE");
    if (text != NULL && *text != '\0') {
        char *end = NULL;
        long value = strtol(text, &end, 10);
        if (end != NULL && *end == '\0' && value >= 0 && value <= 86400) {
            deadline_seconds = value;
        }
    }
    if (deadline_seconds == 0) {
        return;
    }
    pthread_attr_t attributes;
    pthread_t thread;
    if (pthread_attr_init(&attributes) != 0) {
        return;
    }
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attributes, folio_test_watchdog, NULL) != 0) {
        fprintf(stderr, "The test watchdog did not start: the test process has no deadline.\n");
    }
    pthread_attr_destroy(&attributes);
}
