/*
 * faultvfs.c - the fault-injecting VFS (see faultvfs.h): each file opened through it is the
 * default VFS's file with our methods in front, counting and failing reads, writes, syncs
 * and truncates; everything else passes straight through.
 */
#include "faultvfs.h"

#include <sqlite3.h>

#include <stdatomic.h>
#include <string.h>

static sqlite3_vfs *base;          /* the default VFS we wrap */
static sqlite3_vfs fault_vfs;
static int installed;

static atomic_ullong counts[FAULT_KINDS];
static atomic_ullong total, failed;
static atomic_ullong armed_at;     /* 0: nothing armed */
static atomic_int sticky, broken;  /* broken: a sticky fault has fired and not healed */

typedef struct {
    sqlite3_file head;             /* our methods */
    sqlite3_file *real;            /* the default VFS's file, right after this struct */
} fault_file;

#define REAL(f) (((fault_file *)(f))->real)

/* Numbers one call; the error it must fail with, or SQLITE_OK. */
static int tick(int kind, int err) {
    atomic_fetch_add(&counts[kind], 1);
    unsigned long long n = atomic_fetch_add(&total, 1) + 1;
    unsigned long long at = atomic_load(&armed_at);
    int fail = at != 0 && n == at;
    if (fail && atomic_load(&sticky)) atomic_store(&broken, 1);
    if (!fail && kind != FAULT_READ && atomic_load(&broken)) fail = 1;
    if (!fail) return SQLITE_OK;
    atomic_fetch_add(&failed, 1);
    /* A write fails as a full disk half the time: SQLite says FULL for ENOSPC. */
    if (kind == FAULT_WRITE && n % 2 == 0) return SQLITE_FULL;
    return err;
}

/* ---- the file methods ------------------------------------------------------------------ */

static int f_close(sqlite3_file *f) {
    sqlite3_file *r = REAL(f);
    return r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
}

static int f_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off) {
    int rc = tick(FAULT_READ, SQLITE_IOERR_READ);
    return rc ? rc : REAL(f)->pMethods->xRead(REAL(f), buf, amt, off);
}

static int f_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off) {
    int rc = tick(FAULT_WRITE, SQLITE_IOERR_WRITE);
    return rc ? rc : REAL(f)->pMethods->xWrite(REAL(f), buf, amt, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size) {
    int rc = tick(FAULT_TRUNCATE, SQLITE_IOERR_TRUNCATE);
    return rc ? rc : REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int f_sync(sqlite3_file *f, int flags) {
    int rc = tick(FAULT_SYNC, SQLITE_IOERR_FSYNC);
    return rc ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int f_size(sqlite3_file *f, sqlite3_int64 *out) { return REAL(f)->pMethods->xFileSize(REAL(f), out); }
static int f_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int f_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int f_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int f_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int f_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int f_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }

static int f_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp) {
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, pp);
}
static int f_shm_lock(sqlite3_file *f, int off, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags); }
static void f_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int f_shm_unmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }

/* No memory map: a mapped page that the disk cannot read is a SIGBUS, not an error code, and
 * every page read must go through f_read to be counted. SQLite reads with xRead when xFetch
 * hands back no pointer. */
static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp) {
    (void)f, (void)off, (void)amt;
    *pp = NULL;
    return SQLITE_OK;
}
static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p) {
    return REAL(f)->pMethods->iVersion >= 3 ? REAL(f)->pMethods->xUnfetch(REAL(f), off, p) : SQLITE_OK;
}

static const sqlite3_io_methods fault_methods = {
    3, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_reserved,
    f_control, f_sector, f_device, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap,
    f_fetch, f_unfetch,
};

/* ---- the VFS: open wraps, everything else is the default's ------------------------------ */

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    fault_file *ff = (fault_file *)f;
    ff->real = (sqlite3_file *)(ff + 1);
    memset(ff->real, 0, (size_t)base->szOsFile);
    int rc = base->xOpen(base, name, ff->real, flags, out_flags);
    /* SQLite calls xClose only when pMethods is set: set it only if the real file is open. */
    f->pMethods = ff->real->pMethods ? &fault_methods : NULL;
    return rc;
}

static int v_delete(sqlite3_vfs *v, const char *n, int sync) { (void)v; return base->xDelete(base, n, sync); }
static int v_access(sqlite3_vfs *v, const char *n, int flags, int *out) { (void)v; return base->xAccess(base, n, flags, out); }
static int v_full(sqlite3_vfs *v, const char *n, int cap, char *out) { (void)v; return base->xFullPathname(base, n, cap, out); }
static void *v_dlopen(sqlite3_vfs *v, const char *n) { (void)v; return base->xDlOpen(base, n); }
static void v_dlerror(sqlite3_vfs *v, int n, char *out) { (void)v; base->xDlError(base, n, out); }
static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return base->xDlSym(base, h, s); }
static void v_dlclose(sqlite3_vfs *v, void *h) { (void)v; base->xDlClose(base, h); }
static int v_random(sqlite3_vfs *v, int n, char *out) { (void)v; return base->xRandomness(base, n, out); }
static int v_sleep(sqlite3_vfs *v, int us) { (void)v; return base->xSleep(base, us); }
static int v_time(sqlite3_vfs *v, double *out) { (void)v; return base->xCurrentTime(base, out); }
static int v_lasterror(sqlite3_vfs *v, int n, char *out) { (void)v; return base->xGetLastError(base, n, out); }
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return base->xCurrentTimeInt64(base, out); }

int faultvfs_install(void) {
    if (installed) return 0;
    /* The library opens store files through "unix-excl" when the default VFS is "unix"; this
     * VFS becomes the default, so it wraps that one, and the store behaves as it does without
     * it (one process-wide lock, the WAL index in memory, two connections). */
    base = sqlite3_vfs_find("unix-excl");
    if (!base) base = sqlite3_vfs_find(NULL);
    if (!base || base->iVersion < 2) return 1;
    fault_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(fault_file) + base->szOsFile,
        .mxPathname = base->mxPathname,
        .zName = "optimist-faults",
        .xOpen = v_open, .xDelete = v_delete, .xAccess = v_access, .xFullPathname = v_full,
        .xDlOpen = v_dlopen, .xDlError = v_dlerror, .xDlSym = v_dlsym, .xDlClose = v_dlclose,
        .xRandomness = v_random, .xSleep = v_sleep, .xCurrentTime = v_time,
        .xGetLastError = v_lasterror, .xCurrentTimeInt64 = v_time64,
    };
    if (sqlite3_vfs_register(&fault_vfs, 1) != SQLITE_OK) return 1;
    installed = 1;
    return 0;
}

void faultvfs_reset(void) {
    for (int k = 0; k < FAULT_KINDS; k++) atomic_store(&counts[k], 0);
    atomic_store(&total, 0);
    atomic_store(&failed, 0);
    faultvfs_heal();
}

void faultvfs_arm(unsigned long long n, int is_sticky) {
    atomic_store(&sticky, is_sticky);
    atomic_store(&armed_at, n);
}

void faultvfs_heal(void) {
    atomic_store(&armed_at, 0);
    atomic_store(&broken, 0);
    atomic_store(&sticky, 0);
}

unsigned long long faultvfs_count(int kind) { return atomic_load(&counts[kind]); }
unsigned long long faultvfs_total(void) { return atomic_load(&total); }
unsigned long long faultvfs_failed(void) { return atomic_load(&failed); }
