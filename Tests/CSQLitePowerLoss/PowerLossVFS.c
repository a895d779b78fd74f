// The power-loss VFS (see include/PowerLossVFS.h).
//
// Model. Each modeled path is an entry of its directory that points to an inode, twice: the inode the directory holds
// durably and the one it holds now (they differ after a creation or deletion that no directory sync has made durable
// yet; SQLite's unix VFS syncs the directory at the first sync of a journal or write-ahead log it created, and at a
// deletion that asks for it, and the model does the same at the same moments). Each inode keeps its durable contents
// and the list of its writes and truncations since its last sync. A sync applies that list to the durable contents.
// Reads are served by the real file, which always holds the current contents, so SQLite sees a normal file system.
//
// The real fsyncs are skipped: durability is what the model says, and the sweep runs hundreds of cuts.
#include "PowerLossVFS.h"

#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { sector_size = 512 };

typedef struct operation {
    int is_truncation;
    sqlite3_int64 offset;  // for a truncation, the new size
    int length;
    unsigned char *bytes;
} operation;

typedef struct inode {
    unsigned char *durable;
    sqlite3_int64 durable_size;
    sqlite3_int64 durable_capacity;
    operation *pending;
    int pending_count;
    int pending_capacity;
    struct inode *next;  // every inode of the session, freed with it
} inode;

typedef struct entry {
    char *name;  // inside the session's directory
    inode *durable;  // NULL: the directory durably holds no such name
    inode *current;  // NULL: the name is absent now
    struct entry *next;
} entry;

struct folio_powerloss_session {
    char *directory;
    size_t directory_length;
    long cut_at;
    uint64_t seed;
    long event_count;
    char *event_kinds;
    long event_capacity;
    int is_cut;
    int ended;
    int open_files;
    entry *entries;
    inode *inodes;
    char **initial_names;  // the names in the directory when the session began
    int initial_count;
    struct folio_powerloss_session *next;
};

typedef struct modeled_file {
    sqlite3_file base;
    folio_powerloss_session *session;
    entry *entry;
    inode *inode;
    int syncs_directory;
    sqlite3_file *real;
} modeled_file;

static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static folio_powerloss_session *sessions;
static sqlite3_vfs *real_vfs;
static sqlite3_vfs power_loss_vfs;
static const sqlite3_io_methods modeled_methods;

// MARK: - Model

static int reserve(void **buffer, sqlite3_int64 *capacity, sqlite3_int64 needed, size_t element) {
    if (needed <= *capacity) return 1;
    sqlite3_int64 grown = *capacity < 16 ? 16 : *capacity;
    while (grown < needed) grown *= 2;
    void *bigger = realloc(*buffer, (size_t)grown * element);
    if (!bigger) return 0;
    *buffer = bigger;
    *capacity = grown;
    return 1;
}

// Applies a write or truncation to a contents buffer, zero-filling a gap.
static int apply(unsigned char **bytes, sqlite3_int64 *size, sqlite3_int64 *capacity, const operation *op,
                 sqlite3_int64 from, sqlite3_int64 to) {
    if (op->is_truncation) {
        if (op->offset < *size) {
            *size = op->offset;
        } else {
            if (!reserve((void **)bytes, capacity, op->offset, 1)) return 0;
            memset(*bytes + *size, 0, (size_t)(op->offset - *size));
            *size = op->offset;
        }
        return 1;
    }
    // Only bytes [from, to) of the write, file offsets.
    if (to <= from) return 1;
    if (!reserve((void **)bytes, capacity, to, 1)) return 0;
    if (from > *size) memset(*bytes + *size, 0, (size_t)(from - *size));
    memcpy(*bytes + from, op->bytes + (from - op->offset), (size_t)(to - from));
    if (to > *size) *size = to;
    return 1;
}

static void clear_pending(inode *node) {
    for (int index = 0; index < node->pending_count; index++) free(node->pending[index].bytes);
    node->pending_count = 0;
}

static int add_pending(inode *node, int is_truncation, sqlite3_int64 offset, const void *bytes, int length) {
    sqlite3_int64 capacity = node->pending_capacity;
    if (!reserve((void **)&node->pending, &capacity, node->pending_count + 1, sizeof(operation))) return 0;
    node->pending_capacity = (int)capacity;
    operation *op = &node->pending[node->pending_count];
    op->is_truncation = is_truncation;
    op->offset = offset;
    op->length = length;
    op->bytes = NULL;
    if (length > 0) {
        op->bytes = malloc((size_t)length);
        if (!op->bytes) return 0;
        memcpy(op->bytes, bytes, (size_t)length);
    }
    node->pending_count++;
    return 1;
}

// A sync of the file: its pending operations become durable.
static int make_durable(inode *node) {
    for (int index = 0; index < node->pending_count; index++) {
        const operation *op = &node->pending[index];
        if (!apply(&node->durable, &node->durable_size, &node->durable_capacity, op, op->offset,
                   op->offset + op->length)) {
            return 0;
        }
    }
    clear_pending(node);
    return 1;
}

// A sync of the session's directory: every entry's current inode becomes the durable one.
static void sync_directory(folio_powerloss_session *session) {
    for (entry *item = session->entries; item; item = item->next) item->durable = item->current;
}

static inode *new_inode(folio_powerloss_session *session) {
    inode *node = calloc(1, sizeof(inode));
    if (!node) return NULL;
    node->next = session->inodes;
    session->inodes = node;
    return node;
}

static entry *find_entry(folio_powerloss_session *session, const char *name, int creates) {
    for (entry *item = session->entries; item; item = item->next) {
        if (strcmp(item->name, name) == 0) return item;
    }
    if (!creates) return NULL;
    entry *item = calloc(1, sizeof(entry));
    if (!item) return NULL;
    item->name = strdup(name);
    if (!item->name) {
        free(item);
        return NULL;
    }
    item->next = session->entries;
    session->entries = item;
    return item;
}

// The session modeling `path` and the name inside its directory, or NULL. Called with the lock held.
static folio_powerloss_session *session_for(const char *path, const char **name) {
    if (!path) return NULL;
    for (folio_powerloss_session *session = sessions; session; session = session->next) {
        if (strncmp(path, session->directory, session->directory_length) == 0 &&
            path[session->directory_length] == '/') {
            const char *rest = path + session->directory_length + 1;
            if (*rest && !strchr(rest, '/')) {
                *name = rest;
                return session;
            }
        }
    }
    return NULL;
}

// Records an event; returns 1 when the power is cut at it. Called with the lock held.
static int record_event(folio_powerloss_session *session, char kind) {
    sqlite3_int64 capacity = session->event_capacity;
    if (reserve((void **)&session->event_kinds, &capacity, session->event_count + 1, 1)) {
        session->event_capacity = (long)capacity;
        session->event_kinds[session->event_count] = kind;
    }
    long number = session->event_count++;
    if (number == session->cut_at) {
        session->is_cut = 1;
        return 1;
    }
    return 0;
}

static void free_session(folio_powerloss_session *session) {
    for (entry *item = session->entries; item;) {
        entry *next = item->next;
        free(item->name);
        free(item);
        item = next;
    }
    for (inode *node = session->inodes; node;) {
        inode *next = node->next;
        clear_pending(node);
        free(node->pending);
        free(node->durable);
        free(node);
        node = next;
    }
    for (int index = 0; index < session->initial_count; index++) free(session->initial_names[index]);
    free(session->initial_names);
    free(session->event_kinds);
    free(session->directory);
    free(session);
}

static int was_there_initially(folio_powerloss_session *session, const char *name) {
    for (int index = 0; index < session->initial_count; index++) {
        if (strcmp(session->initial_names[index], name) == 0) return 1;
    }
    return 0;
}

// splitmix64: a small, seedable generator, the same on every platform.
static uint64_t next_random(uint64_t *state) {
    uint64_t value = (*state += 0x9E3779B97F4A7C15ULL);
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ULL;
    value = (value ^ (value >> 27)) * 0x94D049BB133111EBULL;
    return value ^ (value >> 31);
}

// MARK: - I/O methods of a modeled file

static int modeled_close(sqlite3_file *file) {
    modeled_file *self = (modeled_file *)file;
    int result = self->real->pMethods ? self->real->pMethods->xClose(self->real) : SQLITE_OK;
    pthread_mutex_lock(&model_lock);
    folio_powerloss_session *session = self->session;
    session->open_files--;
    if (session->ended && session->open_files == 0) free_session(session);
    pthread_mutex_unlock(&model_lock);
    return result;
}

static int modeled_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    modeled_file *self = (modeled_file *)file;
    pthread_mutex_lock(&model_lock);
    int is_cut = self->session->is_cut && !self->session->ended;
    pthread_mutex_unlock(&model_lock);
    if (is_cut) return SQLITE_IOERR_READ;
    return self->real->pMethods->xRead(self->real, buffer, amount, offset);
}

static int modeled_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    modeled_file *self = (modeled_file *)file;
    pthread_mutex_lock(&model_lock);
    folio_powerloss_session *session = self->session;
    if (!session->ended) {
        if (session->is_cut) {
            pthread_mutex_unlock(&model_lock);
            return SQLITE_IOERR_WRITE;
        }
        // The write at the cut is under way when the power goes: some of its sectors may land.
        int cut = record_event(session, 'w');
        if (!add_pending(self->inode, 0, offset, buffer, amount)) {
            pthread_mutex_unlock(&model_lock);
            return SQLITE_IOERR_NOMEM;
        }
        if (cut) {
            pthread_mutex_unlock(&model_lock);
            return SQLITE_IOERR_WRITE;
        }
    }
    pthread_mutex_unlock(&model_lock);
    return self->real->pMethods->xWrite(self->real, buffer, amount, offset);
}

static int modeled_truncate(sqlite3_file *file, sqlite3_int64 size) {
    modeled_file *self = (modeled_file *)file;
    pthread_mutex_lock(&model_lock);
    folio_powerloss_session *session = self->session;
    if (!session->ended) {
        if (session->is_cut || record_event(session, 't')) {
            pthread_mutex_unlock(&model_lock);
            return SQLITE_IOERR_TRUNCATE;
        }
        if (!add_pending(self->inode, 1, size, NULL, 0)) {
            pthread_mutex_unlock(&model_lock);
            return SQLITE_IOERR_NOMEM;
        }
    }
    pthread_mutex_unlock(&model_lock);
    return self->real->pMethods->xTruncate(self->real, size);
}

static int modeled_sync(sqlite3_file *file, int flags) {
    (void)flags;
    modeled_file *self = (modeled_file *)file;
    pthread_mutex_lock(&model_lock);
    folio_powerloss_session *session = self->session;
    int result = SQLITE_OK;
    if (!session->ended) {
        if (session->is_cut || record_event(session, 's')) {
            result = SQLITE_IOERR_FSYNC;
        } else if (!make_durable(self->inode)) {
            result = SQLITE_IOERR_NOMEM;
        } else if (self->syncs_directory) {
            // As the unix VFS does at the first sync of a journal or log it created.
            sync_directory(session);
            self->syncs_directory = 0;
        }
    }
    pthread_mutex_unlock(&model_lock);
    return result;
}

static int modeled_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xFileSize(self->real, size);
}

static int modeled_lock(sqlite3_file *file, int level) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xLock(self->real, level);
}

static int modeled_unlock(sqlite3_file *file, int level) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xUnlock(self->real, level);
}

static int modeled_check_reserved_lock(sqlite3_file *file, int *result) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xCheckReservedLock(self->real, result);
}

static int modeled_file_control(sqlite3_file *file, int operation, void *argument) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xFileControl(self->real, operation, argument);
}

static int modeled_sector_size(sqlite3_file *file) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xSectorSize(self->real);
}

static int modeled_device_characteristics(sqlite3_file *file) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xDeviceCharacteristics(self->real);
}

static int modeled_shm_map(sqlite3_file *file, int page, int page_size, int extend, void volatile **memory) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xShmMap(self->real, page, page_size, extend, memory);
}

static int modeled_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xShmLock(self->real, offset, count, flags);
}

static void modeled_shm_barrier(sqlite3_file *file) {
    modeled_file *self = (modeled_file *)file;
    self->real->pMethods->xShmBarrier(self->real);
}

static int modeled_shm_unmap(sqlite3_file *file, int delete_flag) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xShmUnmap(self->real, delete_flag);
}

static int modeled_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xFetch(self->real, offset, amount, pointer);
}

static int modeled_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    modeled_file *self = (modeled_file *)file;
    return self->real->pMethods->xUnfetch(self->real, offset, pointer);
}

static const sqlite3_io_methods modeled_methods = {
    3,
    modeled_close,
    modeled_read,
    modeled_write,
    modeled_truncate,
    modeled_sync,
    modeled_file_size,
    modeled_lock,
    modeled_unlock,
    modeled_check_reserved_lock,
    modeled_file_control,
    modeled_sector_size,
    modeled_device_characteristics,
    modeled_shm_map,
    modeled_shm_lock,
    modeled_shm_barrier,
    modeled_shm_unmap,
    modeled_fetch,
    modeled_unfetch,
};

// MARK: - VFS methods

// Reads what is on disk when a file is first seen: the state the session starts from counts as durable.
static int read_baseline(sqlite3_file *real, inode *node) {
    sqlite3_int64 size = 0;
    if (real->pMethods->xFileSize(real, &size) != SQLITE_OK) return 0;
    if (size == 0) return 1;
    if (!reserve((void **)&node->durable, &node->durable_capacity, size, 1)) return 0;
    if (size > INT_MAX || real->pMethods->xRead(real, node->durable, (int)size, 0) != SQLITE_OK) return 0;
    node->durable_size = size;
    return 1;
}

static int power_loss_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    int type = flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL | SQLITE_OPEN_WAL);
    const char *relative = NULL;
    pthread_mutex_lock(&model_lock);
    folio_powerloss_session *session = type ? session_for(name, &relative) : NULL;
    if (!session) {
        pthread_mutex_unlock(&model_lock);
        // Not modeled: the unix VFS opens the file in place, and its own methods serve it from then on.
        return real_vfs->xOpen(real_vfs, name, file, flags, out_flags);
    }
    if (session->is_cut) {
        pthread_mutex_unlock(&model_lock);
        file->pMethods = NULL;
        return SQLITE_CANTOPEN;
    }
    session->open_files++;
    pthread_mutex_unlock(&model_lock);

    modeled_file *self = (modeled_file *)file;
    memset(self, 0, sizeof(modeled_file));
    self->session = session;
    self->real = (sqlite3_file *)((char *)file + sizeof(modeled_file));
    struct stat information;
    int existed = stat(name, &information) == 0;
    int result = real_vfs->xOpen(real_vfs, name, self->real, flags, out_flags);

    pthread_mutex_lock(&model_lock);
    entry *item = result == SQLITE_OK ? find_entry(session, relative, 1) : NULL;
    if (result == SQLITE_OK && item) {
        if (!item->current) {
            inode *node = new_inode(session);
            if (!node || (existed && !read_baseline(self->real, node))) {
                result = SQLITE_IOERR_NOMEM;
            } else {
                item->current = node;
                // A file that was there when the session began is durable, entry and contents. One made since by
                // something other than SQLite (a store's first image, which Foundation writes, fsyncs and renames
                // into place) has durable contents, but its entry waits for a sync of the directory.
                if (existed && !item->durable && was_there_initially(session, relative)) item->durable = node;
            }
        }
        self->entry = item;
        self->inode = item->current;
        self->syncs_directory = (flags & SQLITE_OPEN_CREATE) &&
            (type == SQLITE_OPEN_MAIN_JOURNAL || type == SQLITE_OPEN_SUPER_JOURNAL || type == SQLITE_OPEN_WAL);
    } else if (result == SQLITE_OK) {
        result = SQLITE_IOERR_NOMEM;
    }
    if (result != SQLITE_OK) {
        session->open_files--;
        if (session->ended && session->open_files == 0) free_session(session);
        pthread_mutex_unlock(&model_lock);
        if (self->real->pMethods) self->real->pMethods->xClose(self->real);
        file->pMethods = NULL;
        return result;
    }
    pthread_mutex_unlock(&model_lock);
    file->pMethods = &modeled_methods;
    return SQLITE_OK;
}

static int power_loss_delete(sqlite3_vfs *vfs, const char *name, int sync_directory_flag) {
    (void)vfs;
    const char *relative = NULL;
    pthread_mutex_lock(&model_lock);
    folio_powerloss_session *session = session_for(name, &relative);
    entry *item = session ? find_entry(session, relative, 0) : NULL;
    if (!item) {
        pthread_mutex_unlock(&model_lock);
        return real_vfs->xDelete(real_vfs, name, sync_directory_flag);
    }
    if (session->is_cut || record_event(session, 'd')) {
        pthread_mutex_unlock(&model_lock);
        return SQLITE_IOERR_DELETE;
    }
    item->current = NULL;
    if (sync_directory_flag) sync_directory(session);
    pthread_mutex_unlock(&model_lock);
    return real_vfs->xDelete(real_vfs, name, 0);
}

static int power_loss_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return real_vfs->xAccess(real_vfs, name, flags, result);
}

static int power_loss_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *output) {
    (void)vfs;
    return real_vfs->xFullPathname(real_vfs, name, size, output);
}

static void *power_loss_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xDlOpen(real_vfs, name);
}

static void power_loss_dl_error(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    real_vfs->xDlError(real_vfs, size, message);
}

static void (*power_loss_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return real_vfs->xDlSym(real_vfs, handle, symbol);
}

static void power_loss_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    real_vfs->xDlClose(real_vfs, handle);
}

static int power_loss_randomness(sqlite3_vfs *vfs, int size, char *output) {
    (void)vfs;
    return real_vfs->xRandomness(real_vfs, size, output);
}

static int power_loss_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return real_vfs->xSleep(real_vfs, microseconds);
}

static int power_loss_current_time(sqlite3_vfs *vfs, double *time) {
    (void)vfs;
    return real_vfs->xCurrentTime(real_vfs, time);
}

static int power_loss_get_last_error(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, size, message) : 0;
}

static int power_loss_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *time) {
    (void)vfs;
    return real_vfs->xCurrentTimeInt64(real_vfs, time);
}

static int power_loss_set_system_call(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
    (void)vfs;
    return real_vfs->xSetSystemCall(real_vfs, name, call);
}

static sqlite3_syscall_ptr power_loss_get_system_call(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xGetSystemCall(real_vfs, name);
}

static const char *power_loss_next_system_call(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return real_vfs->xNextSystemCall(real_vfs, name);
}

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_result = SQLITE_ERROR;

static void install(void) {
    sqlite3_vfs *unix_vfs = sqlite3_vfs_find(NULL);
    if (!unix_vfs || unix_vfs->iVersion < 3) return;
    real_vfs = unix_vfs;
    power_loss_vfs = (sqlite3_vfs){
        .iVersion = 3,
        // Room for the model's fields, then the unix VFS's own file.
        .szOsFile = (int)((sizeof(modeled_file) + 7) / 8 * 8) + unix_vfs->szOsFile,
        .mxPathname = unix_vfs->mxPathname,
        .zName = "folio-powerloss",
        .pAppData = NULL,
        .xOpen = power_loss_open,
        .xDelete = power_loss_delete,
        .xAccess = power_loss_access,
        .xFullPathname = power_loss_full_pathname,
        .xDlOpen = power_loss_dl_open,
        .xDlError = power_loss_dl_error,
        .xDlSym = power_loss_dl_sym,
        .xDlClose = power_loss_dl_close,
        .xRandomness = power_loss_randomness,
        .xSleep = power_loss_sleep,
        .xCurrentTime = power_loss_current_time,
        .xGetLastError = power_loss_get_last_error,
        .xCurrentTimeInt64 = power_loss_current_time_int64,
        .xSetSystemCall = power_loss_set_system_call,
        .xGetSystemCall = power_loss_get_system_call,
        .xNextSystemCall = power_loss_next_system_call,
    };
    install_result = sqlite3_vfs_register(&power_loss_vfs, 1);
}

int folio_powerloss_install(void) {
    pthread_once(&install_once, install);
    return install_result;
}

// MARK: - Sessions

folio_powerloss_session *folio_powerloss_begin(const char *directory, long cut_at_event, uint64_t seed) {
    // A directory not made yet (a library's store directory, say) is modeled by the path given.
    char resolved[PATH_MAX];
    if (!realpath(directory, resolved)) {
        if (strlen(directory) >= sizeof(resolved)) return NULL;
        strcpy(resolved, directory);
    }
    folio_powerloss_session *session = calloc(1, sizeof(folio_powerloss_session));
    if (!session) return NULL;
    session->directory = strdup(resolved);
    if (!session->directory) {
        free(session);
        return NULL;
    }
    session->directory_length = strlen(resolved);
    session->cut_at = cut_at_event;
    session->seed = seed;
    DIR *listing = opendir(resolved);
    for (struct dirent *item; listing && (item = readdir(listing));) {
        if (strcmp(item->d_name, ".") == 0 || strcmp(item->d_name, "..") == 0) continue;
        char **bigger = realloc(session->initial_names, sizeof(char *) * (size_t)(session->initial_count + 1));
        char *name = bigger ? strdup(item->d_name) : NULL;
        if (bigger) session->initial_names = bigger;
        if (!name) {
            closedir(listing);
            free_session(session);
            return NULL;
        }
        session->initial_names[session->initial_count++] = name;
    }
    if (listing) closedir(listing);
    pthread_mutex_lock(&model_lock);
    session->next = sessions;
    sessions = session;
    pthread_mutex_unlock(&model_lock);
    return session;
}

long folio_powerloss_event_count(folio_powerloss_session *session) {
    pthread_mutex_lock(&model_lock);
    long count = session->event_count;
    pthread_mutex_unlock(&model_lock);
    return count;
}

char folio_powerloss_event_kind(folio_powerloss_session *session, long index) {
    pthread_mutex_lock(&model_lock);
    char kind = index >= 0 && index < session->event_count && session->event_kinds ? session->event_kinds[index] : 0;
    pthread_mutex_unlock(&model_lock);
    return kind;
}

int folio_powerloss_is_cut(folio_powerloss_session *session) {
    pthread_mutex_lock(&model_lock);
    int is_cut = session->is_cut;
    pthread_mutex_unlock(&model_lock);
    return is_cut;
}

void folio_powerloss_cut(folio_powerloss_session *session) {
    pthread_mutex_lock(&model_lock);
    session->is_cut = 1;
    pthread_mutex_unlock(&model_lock);
}

static int write_file(const char *path, const unsigned char *bytes, sqlite3_int64 size) {
    int descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (descriptor < 0) return 0;
    sqlite3_int64 written = 0;
    while (written < size) {
        ssize_t count = write(descriptor, bytes + written, (size_t)(size - written));
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) {
            close(descriptor);
            return 0;
        }
        written += count;
    }
    return close(descriptor) == 0;
}

int folio_powerloss_materialize(folio_powerloss_session *session, const char *destination) {
    pthread_mutex_lock(&model_lock);
    uint64_t random = session->seed;
    int written = 0;
    for (entry *item = session->entries; item && written >= 0; item = item->next) {
        inode *node = item->current;
        // A creation or deletion not yet synced in its directory may or may not have reached the disk.
        if (item->durable != item->current && (next_random(&random) & 1)) node = item->durable;
        if (!node) continue;
        unsigned char *bytes = NULL;
        sqlite3_int64 size = node->durable_size, capacity = 0;
        if (size > 0) {
            if (!reserve((void **)&bytes, &capacity, size, 1)) {
                written = -1;
                break;
            }
            memcpy(bytes, node->durable, (size_t)size);
        }
        int failed = 0;
        for (int index = 0; index < node->pending_count && !failed; index++) {
            const operation *op = &node->pending[index];
            uint64_t choice = next_random(&random) % 3;
            if (choice == 0) continue;  // lost
            if (op->is_truncation || choice == 1) {  // landed whole
                failed = !apply(&bytes, &size, &capacity, op, op->offset, op->offset + op->length);
                continue;
            }
            // Torn: each 512-byte sector it touches lands or not.
            sqlite3_int64 end = op->offset + op->length;
            for (sqlite3_int64 from = op->offset; from < end && !failed;) {
                sqlite3_int64 to = (from / sector_size + 1) * sector_size;
                if (to > end) to = end;
                if (next_random(&random) & 1) failed = !apply(&bytes, &size, &capacity, op, from, to);
                from = to;
            }
        }
        size_t length = strlen(destination) + strlen(item->name) + 2;
        char *path = failed ? NULL : malloc(length);
        if (path) snprintf(path, length, "%s/%s", destination, item->name);
        if (!path || !write_file(path, bytes, size)) {
            written = -1;
        } else {
            written++;
        }
        free(path);
        free(bytes);
    }
    pthread_mutex_unlock(&model_lock);
    return written;
}

void folio_powerloss_end(folio_powerloss_session *session) {
    pthread_mutex_lock(&model_lock);
    for (folio_powerloss_session **link = &sessions; *link; link = &(*link)->next) {
        if (*link == session) {
            *link = session->next;
            break;
        }
    }
    session->ended = 1;
    if (session->open_files == 0) free_session(session);
    pthread_mutex_unlock(&model_lock);
}
