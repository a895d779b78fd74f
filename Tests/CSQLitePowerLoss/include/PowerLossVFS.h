// A SQLite VFS for power-loss tests: it wraps the default (unix) VFS, remembers for each database file, journal and
// write-ahead log what has reached stable storage (contents as of the file's last xSync; creations and deletions as of
// the last sync of their directory) and what is still volatile, and can cut the power at a chosen event. What
// survives the cut is then written out as files: the durable state plus a seeded subset of the volatile writes, torn
// at 512-byte sector boundaries, as a disk that lost power mid-write could leave it.
//
// The VFS is installed as the process's default, so that a store opened by path uses it with no option of its own
// (GRDB opens databases without naming a VFS). Files are modeled only inside a directory given to
// `folio_powerloss_begin`; every other file passes straight to the unix VFS, which then serves it alone.
#ifndef FOLIO_POWER_LOSS_VFS_H
#define FOLIO_POWER_LOSS_VFS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One directory whose SQLite files are modeled, from `folio_powerloss_begin` to `folio_powerloss_end`.
typedef struct folio_powerloss_session folio_powerloss_session;

/// Registers the VFS ("folio-powerloss") as SQLite's default, once per process. Returns a SQLite result code.
int folio_powerloss_install(void);

/// Starts modeling the SQLite files directly inside `directory` (files below it are not modeled); a directory that
/// does not exist yet is modeled by the path given, from when it is made. The files there when the session begins count as durable. A file that appears later without SQLite
/// creating it (a store's first image, which Foundation writes, fsyncs and renames into place) has durable contents
/// and a volatile directory entry, until a sync of the directory. Events (writes, truncations,
/// syncs, deletions of modeled files) are numbered from 0; the event numbered `cut_at_event` does not complete and
/// the power is cut there: it and every later I/O on the session's files fail with an I/O error. A negative
/// `cut_at_event` never cuts (a dry run, to count and list the events). `seed` chooses what volatile state survives.
/// Returns NULL when out of memory.
folio_powerloss_session *folio_powerloss_begin(const char *directory, long cut_at_event, uint64_t seed);

/// The number of events so far, the cut one included.
long folio_powerloss_event_count(folio_powerloss_session *session);

/// The kind of event `index`: 'w' write, 't' truncation, 's' sync, 'd' deletion; 0 when out of range.
char folio_powerloss_event_kind(folio_powerloss_session *session, long index);

/// Whether the power was cut.
int folio_powerloss_is_cut(folio_powerloss_session *session);

/// Cuts the power now, between two events (when something else modeled on the same disk loses it): every later
/// I/O on the session's files fails.
void folio_powerloss_cut(folio_powerloss_session *session);

/// Writes into `destination` (an existing, empty directory) the files that survive a power cut now: for each file,
/// its durable contents plus a seeded subset of its volatile writes (each dropped, kept, or kept only in some of its
/// 512-byte sectors), under the name its directory durably holds, or, for a creation or deletion not yet
/// synced, either the old or the new entry (seeded). Returns the number of files written, or -1 on an I/O error.
int folio_powerloss_materialize(folio_powerloss_session *session, const char *destination);

/// Stops modeling; the session is freed once its last open file closes (files still open pass straight through).
void folio_powerloss_end(folio_powerloss_session *session);

#ifdef __cplusplus
}
#endif

#endif
