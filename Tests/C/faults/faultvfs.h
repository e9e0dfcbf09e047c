/*
 * faultvfs.h - a SQLite VFS for tests that wraps the one liboptimist uses ("unix-excl") and
 * makes chosen I/O calls fail, as a dying or full disk would.
 *
 * liboptimist opens its store files through the system libsqlite3, with "unix-excl" when the
 * process's default VFS is "unix" and with the default otherwise, so a test that links the
 * same libsqlite3 and calls faultvfs_install() (which makes this VFS the default) before
 * optimist_open sees (and can break) every read, write, sync and truncate of the store.
 *
 * Every call of the four kinds is numbered from 1 (one counter for all kinds, since the last
 * faultvfs_reset). faultvfs_arm(n, sticky) makes call number n fail; with sticky set, every
 * write, sync and truncate after it fails too (a full or dead disk: reads still work) until
 * faultvfs_heal() (the disk comes back).
 *
 * The errors are what SQLite's unix VFS says for the real failures: a write fails as ENOSPC
 * (SQLITE_FULL) when n is even and as EIO (SQLITE_IOERR_WRITE) when odd; a sync as
 * SQLITE_IOERR_FSYNC, a read as SQLITE_IOERR_READ, a truncate as SQLITE_IOERR_TRUNCATE.
 *
 * Counters are atomic: the store's writer thread and the caller's threads use the files at once.
 */
#ifndef OPTIMIST_TEST_FAULTVFS_H
#define OPTIMIST_TEST_FAULTVFS_H

enum { FAULT_READ, FAULT_WRITE, FAULT_SYNC, FAULT_TRUNCATE, FAULT_KINDS };

/* Registers the VFS as the process's default (once; later calls do nothing). 0 on success. */
int faultvfs_install(void);

/* Zeroes the counters and disarms. */
void faultvfs_reset(void);

/* Fails I/O call number n (counted from the last reset); sticky: and every write after it. */
void faultvfs_arm(unsigned long long n, int sticky);

/* The disk is back: nothing fails from now on (the counters go on). */
void faultvfs_heal(void);

/* I/O calls of each kind since the last reset, all kinds together, and the calls failed. */
unsigned long long faultvfs_count(int kind);
unsigned long long faultvfs_total(void);
unsigned long long faultvfs_failed(void);

#endif
