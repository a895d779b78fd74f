// Starts child processes without Foundation's `Process` (whose `run()` over-reads a dirent while it scans
// /proc/self/fd on Linux, swift-corelibs-foundation#5472) and ties their lives to this process's.

#include "CChildProcess.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

extern char **environ;

/// A request handed to the spawning thread, and its outcome.
typedef struct pending_spawn {
    const folio_child_spawn_request *request;
    pid_t pid;
    int error_number;
    int failed_step;
    int done;
} pending_spawn;

static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawn_changed = PTHREAD_COND_INITIALIZER;
/// The request the spawning thread is to carry out next; NULL when it is free.
static pending_spawn *spawn_slot = NULL;
/// Requests take the slot in the order they came: each takes the next ticket and waits for its turn, so that
/// threads starting children in a loop cannot keep a single start waiting.
static unsigned long next_ticket = 0;
static unsigned long serving_ticket = 0;
static pthread_once_t spawner_once = PTHREAD_ONCE_INIT;
static int spawner_error = 0;


/// In the child: reports `step` and errno to the parent through `report` and exits.
static void child_fail(int report, int step) {
    int message[2] = {step, errno};
    ssize_t written;
    do {
        written = write(report, message, sizeof message);
    } while (written < 0 && errno == EINTR);
    _exit(127);
}

/// In the child: closes every descriptor from `low` to `high` (inclusive), with close_range when the kernel has it.
static void close_between(unsigned int low, unsigned int high, long limit) {
    if (low > high) return;
    if (syscall(SYS_close_range, low, high, 0) == 0) return;
    long last = (long)high < limit ? (long)high : limit - 1;
    for (long descriptor = low; descriptor <= last; descriptor++) close((int)descriptor);
}

/// In the child, between its start and exec: async-signal-safe calls only, and no write to memory but its own stack
/// (it shares the parent's memory) and errno, which is the suspended spawning thread's.
static void child_before_exec(const folio_child_spawn_request *request, char *const *envp, pid_t parent, int report,
                             long limit) {
    // Every signal to its default action (the spawning thread blocks them all, so no handler runs here).
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    for (int number = 1; number < NSIG; number++) {
        if (number == SIGKILL || number == SIGSTOP) continue;
        (void)sigaction(number, &default_action, NULL);
    }
    // Die with the parent; if it died before this line, the signal will never come: leave now.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) child_fail(report, FOLIO_CHILD_STEP_PDEATHSIG);
    if (getppid() != parent) _exit(127);
    if (request->new_process_group && setpgid(0, 0) != 0) child_fail(report, FOLIO_CHILD_STEP_PROCESS_GROUP);

    // The standard descriptors: first move a source that is itself 0, 1 or 2 (and not in its place) above 2, so
    // that no dup2 overwrites a source still to be used.
    int sources[3] = {request->stdin_fd, request->stdout_fd, request->stderr_fd};
    for (int target = 0; target < 3; target++) {
        if (sources[target] >= 0 && sources[target] < 3 && sources[target] != target) {
            sources[target] = fcntl(sources[target], F_DUPFD, 3);
            if (sources[target] < 0) child_fail(report, FOLIO_CHILD_STEP_DESCRIPTORS);
        }
    }
    for (int target = 0; target < 3; target++) {
        if (sources[target] < 0) continue;
        if (sources[target] == target) {
            // dup2 onto itself would keep close-on-exec.
            if (fcntl(target, F_SETFD, 0) != 0) child_fail(report, FOLIO_CHILD_STEP_DESCRIPTORS);
        } else if (dup2(sources[target], target) < 0) {
            child_fail(report, FOLIO_CHILD_STEP_DESCRIPTORS);
        }
    }
    // Everything else closed but the report pipe, which is close-on-exec.
    close_between(3, (unsigned int)report - 1, limit);
    close_between((unsigned int)report + 1, ~0U, limit);

    if (request->directory != NULL && chdir(request->directory) != 0) child_fail(report, FOLIO_CHILD_STEP_DIRECTORY);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(request->path, request->argv, envp);
    child_fail(report, FOLIO_CHILD_STEP_EXEC);
}

/// What the child needs from the spawning thread.
typedef struct child_start {
    const folio_child_spawn_request *request;
    char *const *envp;
    pid_t parent;
    int report_read;
    int report_write;
    long limit;
} child_start;

/// The child's stack until it executes: it makes a few system calls, nothing more.
static const size_t child_stack_size = 256 * 1024;

/// The child's entry point (see `clone` in `spawn_now`).
static int child_main(void *argument) {
    const child_start *start = argument;
    close(start->report_read);
    child_before_exec(start->request, start->envp, start->parent, start->report_write, start->limit);
    _exit(127);  // not reached
}

/// On the spawning thread: starts the child, and waits until it executed or reported why it could not.
static void spawn_now(pending_spawn *pending) {
    const folio_child_spawn_request *request = pending->request;
    char *const *envp = request->envp != NULL ? request->envp : environ;
    struct rlimit limits;
    long limit = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limits) == 0 && limits.rlim_cur != RLIM_INFINITY) limit = (long)limits.rlim_cur;

    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        pending->pid = -1;
        pending->error_number = errno;
        pending->failed_step = FOLIO_CHILD_STEP_PIPE;
        return;
    }
    // The report pipe above the standard descriptors (they may be closed in this process).
    for (int side = 0; side < 2; side++) {
        if (report[side] < 3) {
            int moved = fcntl(report[side], F_DUPFD_CLOEXEC, 3);
            if (moved >= 0) {
                close(report[side]);
                report[side] = moved;
            }
        }
    }
    // The child shares this process's memory until it executes (CLONE_VM), and this thread waits until it has
    // (CLONE_VFORK): unlike fork, nothing of a large process is copied, so a start costs the same in a test process
    // of gigabytes as in a small one. The child runs on a stack of its own, and this thread's signals stay blocked,
    // so no handler runs in it before it resets them.
    child_start start = {request, envp, getpid(), report[0], report[1], limit};
    pid_t pid = -1;
    void *stack = mmap(NULL, child_stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack != MAP_FAILED) {
        pid = clone(child_main, (char *)stack + child_stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
    }
    int fork_error = errno;
    if (stack != MAP_FAILED) munmap(stack, child_stack_size);
    close(report[1]);
    if (pid < 0) {
        close(report[0]);
        pending->pid = -1;
        pending->error_number = fork_error;
        pending->failed_step = FOLIO_CHILD_STEP_FORK;
        return;
    }
    int message[2] = {0, 0};
    size_t received = 0;
    while (received < sizeof message) {
        ssize_t count = read(report[0], (char *)message + received, sizeof message - received);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) break;
        received += (size_t)count;
    }
    close(report[0]);
    if (received == 0) {
        // The pipe closed on exec: the child runs the executable.
        pending->pid = pid;
        pending->error_number = 0;
        pending->failed_step = FOLIO_CHILD_STEP_NONE;
        return;
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    pending->pid = -1;
    pending->error_number = received == sizeof message ? message[1] : EIO;
    pending->failed_step = received == sizeof message ? message[0] : FOLIO_CHILD_STEP_EXEC;
}

/// The spawning thread: carries out requests one at a time, forever (its exit would kill every child).
static void *spawner_main(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&spawn_lock);
        while (spawn_slot == NULL || spawn_slot->done) pthread_cond_wait(&spawn_changed, &spawn_lock);
        pending_spawn *pending = spawn_slot;
        pthread_mutex_unlock(&spawn_lock);
        spawn_now(pending);
        pthread_mutex_lock(&spawn_lock);
        pending->done = 1;
        pthread_cond_broadcast(&spawn_changed);
        pthread_mutex_unlock(&spawn_lock);
    }
    return NULL;
}

static void start_spawner(void) {
    // Created with every signal blocked, which it inherits, so that no signal handler runs in a child
    // before it resets the handlers.
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    spawner_error = pthread_create(&thread, &attributes, spawner_main, NULL);
    pthread_attr_destroy(&attributes);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
#if defined(__GLIBC__)
    if (spawner_error == 0) pthread_setname_np(thread, "folio-spawner");
#endif
}

pid_t folio_child_spawn(const folio_child_spawn_request *request, int *error_number, int *failed_step) {
    pthread_once(&spawner_once, start_spawner);
    if (spawner_error != 0) {
        *error_number = spawner_error;
        *failed_step = FOLIO_CHILD_STEP_THREAD;
        return -1;
    }
    pending_spawn pending = {request, -1, 0, 0, 0};
    pthread_mutex_lock(&spawn_lock);
    // One request at a time in the slot, in the order they came: wait for this one's turn, then for it to be done.
    unsigned long ticket = next_ticket++;
    while (serving_ticket != ticket) pthread_cond_wait(&spawn_changed, &spawn_lock);
    spawn_slot = &pending;
    pthread_cond_broadcast(&spawn_changed);
    while (!pending.done) pthread_cond_wait(&spawn_changed, &spawn_lock);
    spawn_slot = NULL;
    serving_ticket++;
    pthread_cond_broadcast(&spawn_changed);
    pthread_mutex_unlock(&spawn_lock);
    *error_number = pending.error_number;
    *failed_step = pending.failed_step;
    return pending.pid;
}

int folio_child_pipe(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }
