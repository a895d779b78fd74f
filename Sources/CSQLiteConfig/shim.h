// The system's SQLite (libsqlite3-dev): process-wide settings that Swift cannot make, sqlite3_config being variadic.
#include <sqlite3.h>

// Turns off SQLite's memory statistics, which take a process-wide mutex at every allocation and so serialize the
// threads of a process that runs several stores at once (SQLite recommends SQLITE_DEFAULT_MEMSTATUS=0). Only
// possible before SQLite initializes: afterwards the call changes nothing and returns SQLITE_MISUSE.
static inline int folio_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// Makes `db` close without folding its write-ahead log into the database file, as a killed process leaves it.
static inline int folio_sqlite_skip_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
