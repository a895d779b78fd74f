#ifndef FOLIO_CCHILDPROCESS_H
#define FOLIO_CCHILDPROCESS_H

#include <sys/types.h>

/// What `folio_child_spawn` starts: an executable by its path, its arguments and environment, where it runs and
/// what its standard descriptors are.
typedef struct folio_child_spawn_request {
    /// The executable's path (not searched for in PATH).
    const char *path;
    /// The arguments, the first being the program's name, ended by NULL.
    char *const *argv;
    /// The environment as NAME=VALUE strings ended by NULL; NULL: this process's environment.
    char *const *envp;
    /// The directory it starts in; NULL: this process's.
    const char *directory;
    /// The descriptors that become its standard input, output and error; -1: this process's own.
    int stdin_fd;
    int stdout_fd;
    int stderr_fd;
    /// Nonzero: the child starts a process group of its own (setpgid(0, 0)).
    int new_process_group;
} folio_child_spawn_request;

/// The step of starting a child that failed, with the errno `folio_child_spawn` reports.
enum folio_child_spawn_step {
    FOLIO_CHILD_STEP_NONE = 0,
    FOLIO_CHILD_STEP_PIPE = 1,
    FOLIO_CHILD_STEP_FORK = 2,
    FOLIO_CHILD_STEP_PDEATHSIG = 3,
    FOLIO_CHILD_STEP_PROCESS_GROUP = 4,
    FOLIO_CHILD_STEP_DESCRIPTORS = 5,
    FOLIO_CHILD_STEP_DIRECTORY = 6,
    FOLIO_CHILD_STEP_EXEC = 7,
    FOLIO_CHILD_STEP_THREAD = 8,
};

/// Starts a child process that is killed (SIGKILL) when this process ends, however it ends.
///
/// The start happens on one dedicated thread of this process that is started at the first call and never exits
/// (PR_SET_PDEATHSIG fires when the thread that started the child ends, not the process); calling threads wait for
/// it in the order they called. The child shares this process's memory until it executes (clone with CLONE_VM and
/// CLONE_VFORK, as posix_spawn does), so a start costs the same however large this process is. Between its start
/// and exec the child makes only async-signal-safe calls: it resets every signal to its default
/// action, asks for SIGKILL when its parent dies (and exits at once if the parent already died), optionally starts
/// its own process group, makes the given descriptors its standard ones, closes every other descriptor, changes
/// directory, unblocks every signal and executes `path`.
///
/// Returns the child's process identifier, or -1 with `*error_number` (an errno) and `*failed_step` (a
/// `folio_child_spawn_step`) set; a child that could not execute has been waited for.
pid_t folio_child_spawn(const folio_child_spawn_request *request, int *error_number, int *failed_step);

/// pipe2(descriptors, O_CLOEXEC), which Swift's Glibc module does not declare.
int folio_child_pipe(int descriptors[2]);

#endif
