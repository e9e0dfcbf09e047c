/*
** optimist.h -- the C interface of Optimist, an embeddable optimistic-state core.
**
** OVERVIEW
**
** A store keeps two layers of state:
**
**   - the CONFIRMED state C: what the server (or any authority) has acknowledged;
**   - the PENDING mutations P = [m1 ... mk], in the order they were applied.
**
** What every read returns is the VISIBLE state V = fold(P, C): each pending mutation re-applied,
** in order, on top of C. A mutation (optimist_mutate) changes V at once; later the server's answer
** either commits it (optimist_commit: its ops, or the server's own, fold into C) or rolls it back
** (optimist_rollback: V becomes what it would be had the mutation never happened, while every
** other pending mutation keeps its effect). Changes that come from elsewhere enter C through
** optimist_server_apply, and the pending mutations are re-applied on top of them.
**
** A store holds collections; a collection maps keys to records. Collections, keys and field names
** are NUL-terminated UTF-8 strings, compared byte by byte (so ISO dates and zero-padded numbers
** sort naturally). A record is a JSON object, passed in and out as text.
**
** THREADS
**
** One store may be used from many threads at once; every function here is safe to call
** concurrently on the same store. Listeners (optimist_subscribe) run synchronously on the thread
** whose call changed the store, after the change is visible and outside the store's internal
** locks, so a listener may read the store and may mutate it without deadlock. Reads never wait
** for a writer's whole call. A mutate (optimist_mutate, optimist_put ...) never waits for a big
** server change (an optimist_server_apply or a pull of 1,024 records or more): it runs between
** the change's steps, and the change is still seen whole, after the mutations before it and
** before those after it. Every other change (a commit, a rollback, another server change) and
** optimist_flush wait for such a change to end (docs/concepts.md, "Threads"). Batches
** (optimist_batch) are not locked: a batch may be passed to several calls at once, but must not be
** changed (optimist_batch_put ...) or freed while another thread is using it.
**
** ERRORS
**
** Every function that can fail returns an int result code: OPTIMIST_OK (0) on success, otherwise
** one of the OPTIMIST_* codes below. A failing call also records an English message, readable
** with optimist_last_error() on the same thread until the next failing call on that thread.
** optimist_errstr() gives a fixed description of a code. Out-parameters are written only when a
** call returns OPTIMIST_OK (the one exception: the id written by optimist_mutate on
** OPTIMIST_DUPLICATE). No input makes the library abort: NULL pointers, closed handles and bad
** values are reported as OPTIMIST_MISUSE, malformed JSON or UTF-8 as OPTIMIST_INVALID.
**
** LIMITS
**
** One mutation is bounded, as a sync server bounds it (docs/protocol.md, "Limits"): a collection
** or key of at most 1024 bytes of UTF-8; a put's or patch's value nested at most 64 levels deep
** (the record itself is level 1); at most 4 MiB (4,194,304 bytes) of ops written as compact JSON
** text (what a push sends); at most 10,000 ops. optimist_mutate, optimist_mutate_with_policy,
** optimist_mutate_ext, optimist_put and optimist_put_fields refuse a mutation over any of them
** with OPTIMIST_INVALID (optimist_last_error names the limit) and change nothing. The batch
** adders take such ops (a batch may also carry a server's ops, for optimist_server_apply or a
** commit, which the limits do not bind); a mutate of the batch refuses them.
**
** OWNERSHIP
**
** Strings passed in are borrowed for the duration of the call; the library keeps copies of what
** it needs. Strings handed out through a char** out-parameter are NUL-terminated UTF-8 owned by
** the caller, who releases them with optimist_free(). Strings returned directly by
** optimist_version(), optimist_errstr() and optimist_last_error() belong to the library and must
** not be freed. Handles (optimist_store, optimist_batch) are created and released only by the
** functions named for it.
**
** JSON
**
** JSON handed out is canonical: compact, object members sorted bytewise by name, integral numbers
** below 2^53 written without a fraction, other numbers in shortest round-trip form. Two hosts can
** therefore compare results as plain strings. JSON taken in must be strict RFC 8259 UTF-8 text
** holding a single value (nesting depth at most 256).
**
** TIME
**
** The library never reads a clock. Times (now_ms, at_ms) are milliseconds on the caller's own
** clock, passed in, so behaviour is deterministic and testable.
*/
#ifndef OPTIMIST_H
#define OPTIMIST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
** VERSION
**
** OPTIMIST_VERSION is the version of this header as "MAJOR.MINOR.PATCH";
** OPTIMIST_VERSION_NUMBER is MAJOR*1000000 + MINOR*1000 + PATCH. optimist_version() returns the
** version of the library actually loaded, which a program may compare with the header's.
**
** These two lines are the one place the version is written: the build reads the library's
** version (its file name liboptimist.so.MAJOR.MINOR.PATCH, the CMake package's version,
** optimist_version()) and the Python package's version from them.
**
** 1.1.0 added optimist_mutate_ext (optimist_mutate_options), optimist_put, optimist_put_fields
** and the retry policy at open (optimist_open_options version 2). 1.2.0 added
** optimist_get_into and optimist_get_confirmed_into. 1.3.0 added optimist_commit_with_renames,
** optimist_mutation, optimist_wait_settled, optimist_outbox_wait, and local-only and read-only
** stores (optimist_open_options version 3). Nothing was removed or
** changed: the SONAME stays liboptimist.so.1.
*/
#define OPTIMIST_VERSION        "1.3.0"
#define OPTIMIST_VERSION_NUMBER 1003000

/*
** RESULT CODES
*/
#define OPTIMIST_OK         0  /* success */
#define OPTIMIST_ERROR      1  /* internal error (a bug, or out of memory) */
#define OPTIMIST_MISUSE     2  /* NULL or closed handle, NULL required argument, bad argument */
#define OPTIMIST_NOTFOUND   3  /* no such record, mutation, view or subscription; nothing due */
#define OPTIMIST_STATE      4  /* the mutation is not in a state that allows this */
#define OPTIMIST_INVALID    5  /* malformed JSON/UTF-8, not an object, an op that cannot apply, over a limit */
#define OPTIMIST_DUPLICATE  6  /* a not-yet-ended mutation holds the same dedupe key */
#define OPTIMIST_IO         7  /* the disk said no */
#define OPTIMIST_CORRUPT    8  /* not an optimist store, or a damaged one */
#define OPTIMIST_BUSY       9  /* the store file is held by another process */

/*
** MUTATION STATUS (optimist_status)
**
** A mutation is PENDING when applied and not yet handed to a sender, INFLIGHT once
** optimist_outbox_next handed it out, FAILED when it failed for good under OPTIMIST_POLICY_KEEP
** (it stays visible until optimist_retry or optimist_rollback), and finally COMMITTED or
** ROLLED_BACK. PENDING, INFLIGHT and FAILED mutations are "not yet ended": they count towards the
** visible state and make the records they touch pending.
*/
#define OPTIMIST_PENDING     1
#define OPTIMIST_INFLIGHT    2
#define OPTIMIST_FAILED      3
#define OPTIMIST_COMMITTED   4
#define OPTIMIST_ROLLED_BACK 5

/*
** FAILURE POLICY (optimist_mutate_with_policy)
**
** What happens to a mutation that fails permanently, or runs out of retries:
** OPTIMIST_POLICY_ROLLBACK (the default) rolls it back; OPTIMIST_POLICY_KEEP keeps it visible with
** status OPTIMIST_FAILED until optimist_retry or optimist_rollback.
*/
#define OPTIMIST_POLICY_ROLLBACK 0
#define OPTIMIST_POLICY_KEEP     1

/*
** CHANGE CAUSES (optimist_change.cause): the kind of call that changed a record.
*/
#define OPTIMIST_CAUSE_MUTATE   1  /* optimist_mutate, optimist_mutate_with_policy */
#define OPTIMIST_CAUSE_COMMIT   2  /* optimist_commit */
#define OPTIMIST_CAUSE_ROLLBACK 3  /* optimist_rollback */
#define OPTIMIST_CAUSE_SERVER   4  /* optimist_server_apply */
#define OPTIMIST_CAUSE_FAIL     5  /* optimist_fail (a rollback by policy, or a kept failure) */
#define OPTIMIST_CAUSE_RETRY    6  /* optimist_retry */
#define OPTIMIST_CAUSE_SYNC     7  /* the background sync changed a mutation's status and left
                                      values alone: handed to the server (inflight), or put back
                                      to pending after its request got no answer (see
                                      optimist_sync_start) */

/*
** RECORD STATUS (optimist_change.pending): what the not-yet-ended mutations on a record say.
**
** OPTIMIST_RECORD_CONFIRMED: nothing pending touches it (it is what the server acknowledged).
** OPTIMIST_RECORD_PENDING: a pending or inflight mutation touches it, and no failed one.
** OPTIMIST_RECORD_FAILED: a failed mutation kept visible (OPTIMIST_POLICY_KEEP) touches it, the
** "failed - tap to retry" badge.
**
** CONFIRMED is 0, so `if (c->pending)` still means "not confirmed", as when the field was a flag.
*/
#define OPTIMIST_RECORD_CONFIRMED 0
#define OPTIMIST_RECORD_PENDING   1
#define OPTIMIST_RECORD_FAILED    2

/*
** HANDLES
**
** optimist_store is an open store (optimist_open). After optimist_close the pointer stays safe
** to pass: every call with it returns OPTIMIST_MISUSE ("the store is closed"), so the library
** keeps a tombstone (the emptied store) per store ever opened for the life of the process:
** about 18 KiB, most of it the 64 empty shards of its read cache and their locks.
**
** optimist_batch is a list of ops: the ops of one mutation, or of one change from the server.
** Using a batch after optimist_batch_free is undefined behaviour (the library catches it as
** OPTIMIST_MISUSE when the memory has not been reused yet, but cannot promise to).
*/
typedef struct optimist_store optimist_store;
typedef struct optimist_batch optimist_batch;

/* ------------------------------------------------------------------------------------------ */
/* LIBRARY                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
** The version of the loaded library, "MAJOR.MINOR.PATCH" (the OPTIMIST_VERSION of the header it was
** built from). Static storage: do not free.
*/
const char *optimist_version(void);

/*
** A fixed English description of result code rc ("unknown result code" for a value that is not
** one). Static storage: do not free.
*/
const char *optimist_errstr(int rc);

/*
** The message of the last call that failed on the calling thread, or "" if none has. Owned by
** the library; valid until the next failing call on the same thread. Successful calls leave it
** unchanged. Each thread has its own, freed when the thread exits.
*/
const char *optimist_last_error(void);

/*
** Releases a string handed out by this library (any char** out-parameter). NULL is a no-op.
*/
void optimist_free(void *p);

/* ------------------------------------------------------------------------------------------ */
/* OPENING AND CLOSING                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
** Opens the store at path, a SQLite file created if absent, and writes its handle to *out.
** path NULL opens a new, empty in-memory store.
**
** A file-backed store persists the confirmed state and every not-yet-ended mutation. Mutations
** return before the disk write (which happens in the background, batched); optimist_flush waits
** for it.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE if out is NULL; OPTIMIST_INVALID if path is not UTF-8;
** OPTIMIST_IO if the file cannot be opened or created; OPTIMIST_CORRUPT if it is not an optimist
** store or is damaged; OPTIMIST_BUSY if another process holds it.
*/
int optimist_open(const char *path, optimist_store **out);

/*
** How a store opens: the argument of optimist_open_ext.
**
** VERSIONING: as optimist_sync_options. Initialise with OPTIMIST_OPEN_OPTIONS_INIT (which sets
** version and every default), then change the members you need:
**
**     optimist_open_options o = OPTIMIST_OPEN_OPTIONS_INIT;
**     o.cache_bytes = 8 << 20;
**     o.max_attempts = 3;
**
** cache_bytes bounds the memory of parsed records the store keeps (twice over at most: the
** records a get found are kept for gets that take no lock, mostly the same records, shared).
** A store file keeps its
** confirmed records in the file and reads them on demand through this cache (opening a store
** file reads only its not-yet-ended mutations and its views: it costs O(pending), not
** O(records)); an in-memory store keeps its records as compact JSON bytes behind the same
** cache. Memory also holds what is pending (each touched record's pending value) and, for a
** store file, confirmed records the background writer has not written yet. 0 is
** OPTIMIST_MISUSE; the smallest positive value keeps nothing between calls (slow, but
** correct); values above 2^48 are clamped to it.
**
** max_attempts, base_delay_ms and max_delay_ms (version 2) are the retry policy the store opens
** with, as optimist_set_retry_policy sets it later: max_attempts below 1 or a negative delay is
** OPTIMIST_MISUSE. A version 1 struct (without them) opens with the default policy.
**
** local_only (version 3; 0 or 1, else OPTIMIST_MISUSE) opens a store with no server: the store
** is its own authority. Each mutation commits once the background writer has it on disk (in
** memory: at once, before optimist_mutate returns), with no commit loop of yours: when
** optimist_flush returns OPTIMIST_OK, every mutation made before it is committed, and one the
** file held pending at the open commits during the open. When a disk write fails, the
** mutations it held are settled by their policy: rolled back (listeners hear cause
** OPTIMIST_CAUSE_ROLLBACK) or, under OPTIMIST_POLICY_KEEP, kept visible as OPTIMIST_FAILED
** (OPTIMIST_CAUSE_FAIL), each with the failure as its "last_error" (optimist_mutation), and
** optimist_flush returns the failure. A local-only store has no outbox to send:
** optimist_outbox_next, optimist_outbox_wait and optimist_sync_start return OPTIMIST_MISUSE. It
** is given at each open; the file does not remember it.
**
** read_only (version 3; 0 or 1, else OPTIMIST_MISUSE) opens a store file that another process
** may have open (a widget beside its app, a tool, a test) without waiting for it or disturbing
** it: never OPTIMIST_BUSY, and the other process's writes and flushes never fail because of it.
** The store shows the file as it was at the open: everything the other process had flushed by
** then, its not-yet-ended mutations included (as the visible state), nothing later. Reads, live
** queries and subscriptions work; every change (a mutate, a commit, optimist_server_apply, a
** view definition, optimist_outbox_next, optimist_sync_start) returns OPTIMIST_MISUSE. The open
** copies the file and its write-ahead log into a new private directory under TMPDIR (time and
** temporary disk space of the file's size), removed at optimist_close; open again to see later
** changes. A NULL path, or local_only as well, is OPTIMIST_MISUSE; a missing file OPTIMIST_IO.
*/
typedef struct optimist_open_options {
    unsigned int version;           /* OPTIMIST_OPEN_OPTIONS_VERSION */
    size_t cache_bytes;             /* OPTIMIST_CACHE_BYTES_DEFAULT: 33554432 (32 MiB) */
    /* version 2 */
    int max_attempts;               /* 5: sends a mutation may have (see optimist_fail) */
    int64_t base_delay_ms;          /* 1000: the backoff after the first failed attempt */
    int64_t max_delay_ms;           /* 60000: the cap on the backoff */
    /* version 3 */
    int local_only;                 /* 0: commits come from a sync or your sender; 1: local-only */
    int read_only;                  /* 0; 1: a copy of a file another process may hold, no changes */
} optimist_open_options;

#define OPTIMIST_OPEN_OPTIONS_VERSION 3
#define OPTIMIST_CACHE_BYTES_DEFAULT ((size_t)32 << 20)
#define OPTIMIST_OPEN_OPTIONS_INIT \
    { OPTIMIST_OPEN_OPTIONS_VERSION, OPTIMIST_CACHE_BYTES_DEFAULT, 5, 1000, 60000, 0, 0 }

/*
** optimist_open with options (opts NULL: the defaults, as optimist_open). Returns what
** optimist_open returns, and OPTIMIST_MISUSE for a version this library does not read, a
** cache_bytes of 0 or a bad retry policy.
*/
int optimist_open_ext(const char *path, const optimist_open_options *opts, optimist_store **out);

/*
** Flushes and closes the store, and releases it. The handle stays a tombstone: later calls with
** it return OPTIMIST_MISUSE, except optimist_close itself, which returns OPTIMIST_OK again.
** s NULL is a no-op returning OPTIMIST_OK.
**
** A background sync running on the store is stopped first, as by optimist_sync_stop (so close
** waits for a host transport's call in progress to return). Listeners still registered are
** dropped. If the final flush fails, the store is closed all the same and the failure's code
** (OPTIMIST_IO ...) is returned: what was not yet written is lost.
** Returns OPTIMIST_OK; OPTIMIST_MISUSE if s is not a store handle.
*/
int optimist_close(optimist_store *s);

/*
** Returns once everything that happened before the call is durable: after OPTIMIST_OK it
** survives a crash (even kill -9) and reopens with the same visible state and the same pending
** mutations and statuses. A no-op for an in-memory store.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store); OPTIMIST_IO.
*/
int optimist_flush(optimist_store *s);

/*
** Writes the store's client id to *out: a UUID made when the store was created and persisted
** with it. (client id, mutation id) is the idempotency key a sender passes to its server, so a
** mutation re-sent after a crash or a lost acknowledgement takes effect once. Free *out with
** optimist_free.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, out NULL); OPTIMIST_ERROR (out of
** memory).
*/
int optimist_client_id(optimist_store *s, char **out);

/*
** Sets how transient failures (optimist_fail with transient != 0) are retried: a mutation may be
** sent max_attempts times in all; after each failed attempt it waits an exponential backoff with
** jitter, starting around base_delay_ms, doubling per attempt, capped at max_delay_ms. Applies
** from the next failure on; not persisted (set it after each open, or open with it:
** optimist_open_options). The default is 5 attempts,
** 1000 ms, 60000 ms.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, max_attempts < 1, a negative
** delay).
*/
int optimist_set_retry_policy(optimist_store *s, int max_attempts, int64_t base_delay_ms,
                              int64_t max_delay_ms);

/* ------------------------------------------------------------------------------------------ */
/* BATCHES OF OPS                                                                             */
/* ------------------------------------------------------------------------------------------ */

/*
** Creates an empty batch and writes its handle to *out. Release it with optimist_batch_free.
** A batch can be passed to any number of calls; they copy its ops.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE if out is NULL.
*/
int optimist_batch_new(optimist_batch **out);

/*
** Releases a batch. NULL is a no-op.
*/
void optimist_batch_free(optimist_batch *b);

/*
** Appends an op that replaces record key of collection coll with the JSON object json.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (b, coll, key or json NULL); OPTIMIST_INVALID (a string
** is not UTF-8, json is malformed or not an object). On failure the batch is unchanged.
*/
int optimist_batch_put(optimist_batch *b, const char *coll, const char *key, const char *json);

/*
** Appends an op that applies the JSON object json to the record as an RFC 7396 merge patch: a
** missing record counts as {}, a null member removes that field, nested objects merge.
**
** Returns as optimist_batch_put.
*/
int optimist_batch_patch(optimist_batch *b, const char *coll, const char *key, const char *json);

/*
** A record's field given by value, for optimist_batch_put_fields and optimist_batch_patch_fields:
** the record is built from the fields directly, with no JSON to format or parse (and no escaping
** to get wrong). name and text are NUL-terminated UTF-8, borrowed for the call. type says which
** value counts:
**
**   OPTIMIST_FIELD_NULL    JSON null (in a patch: removes the field)
**   OPTIMIST_FIELD_BOOL    true when number is not 0, else false
**   OPTIMIST_FIELD_NUMBER  number (finite)
**   OPTIMIST_FIELD_TEXT    the string text
**
** Nested objects and arrays need JSON (optimist_batch_put). 64-bit platforms only.
*/
#define OPTIMIST_FIELD_NULL   0
#define OPTIMIST_FIELD_BOOL   1
#define OPTIMIST_FIELD_NUMBER 2
#define OPTIMIST_FIELD_TEXT   3

typedef struct optimist_field {
    const char *name;
    const char *text;
    double number;
    int type;
} optimist_field;

/*
** Appends an op that replaces record key of collection coll with the flat record made of the
** count fields (an object with those members; a repeated name: the last one wins). Reads the same
** as optimist_batch_put of the equivalent JSON, at a fraction of the cost.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (b, coll or key NULL, fields NULL with count > 0, a field's
** name NULL, a text field's text NULL, an unknown type); OPTIMIST_INVALID (a string is not UTF-8,
** a number is NaN or infinite). On failure the batch is unchanged.
*/
int optimist_batch_put_fields(optimist_batch *b, const char *coll, const char *key,
                              const optimist_field *fields, size_t count);

/*
** Appends an RFC 7396 merge patch made of the count fields (see optimist_batch_patch): each field
** sets that member; an OPTIMIST_FIELD_NULL field removes it.
**
** Returns as optimist_batch_put_fields.
*/
int optimist_batch_patch_fields(optimist_batch *b, const char *coll, const char *key,
                                const optimist_field *fields, size_t count);

/*
** Appends an op that removes the record (no error when it is absent).
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (b, coll or key NULL); OPTIMIST_INVALID (not UTF-8).
*/
int optimist_batch_delete(optimist_batch *b, const char *coll, const char *key);

/*
** Appends an op that adds delta to the top-level numeric field of the record; a missing record
** or field counts as 0. Being relative, it re-applies correctly on a changed base. Applied to a
** field that holds something other than a number, it fails (see optimist_mutate).
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (b, coll, key or field NULL); OPTIMIST_INVALID (not
** UTF-8, or delta is NaN or infinite).
*/
int optimist_batch_incr(optimist_batch *b, const char *coll, const char *key, const char *field,
                        double delta);

/* ------------------------------------------------------------------------------------------ */
/* MUTATIONS                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
** Applies the ops of batch b to the visible state at once, as one atomic mutation, and writes
** its id to *out_id (ids increase and are never reused in a store's life, also across reopen;
** after a crash the next id skips ahead by 2^20, because an id handed out but not yet written may
** already have reached a server). Either every op applies or none does. The mutation is PENDING and has the default policy,
** OPTIMIST_POLICY_ROLLBACK.
**
** dedupe_key (may be NULL) guards against double submission: while a not-yet-ended mutation
** holds the same key, the call changes nothing, writes that mutation's id to *out_id and returns
** OPTIMIST_DUPLICATE. Once that mutation is committed or rolled back the key is free again.
**
** out_id may be NULL when the caller does not need the id.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, b NULL or empty: a mutation needs
** at least one op); OPTIMIST_INVALID (an op cannot apply, e.g. incr of a field holding a string,
** or the ops are over a limit (LIMITS, above: a name over 1024 bytes, nesting over 64 levels,
** over 10,000 ops or 4 MiB of JSON text): nothing changes; dedupe_key not UTF-8);
** OPTIMIST_DUPLICATE; OPTIMIST_IO (an earlier background
** write failed); OPTIMIST_STATE (the store has handed out every id up to 2^53 - 1, the largest
** a JSON number carries exactly: a store file naming a larger one does not open, CORRUPT).
*/
int optimist_mutate(optimist_store *s, const optimist_batch *b, const char *dedupe_key,
                    uint64_t *out_id);

/*
** As optimist_mutate, with the failure policy given: OPTIMIST_POLICY_ROLLBACK or
** OPTIMIST_POLICY_KEEP; any other value returns OPTIMIST_MISUSE. The same as optimist_mutate_ext
** with those two options.
*/
int optimist_mutate_with_policy(optimist_store *s, const optimist_batch *b,
                                const char *dedupe_key, int policy, uint64_t *out_id);

/*
** How a mutation is made: the argument of optimist_mutate_ext.
**
** VERSIONING: as optimist_sync_options. Initialise with OPTIMIST_MUTATE_OPTIONS_INIT (which sets
** version and every default), then change the members you need:
**
**     optimist_mutate_options o = OPTIMIST_MUTATE_OPTIONS_INIT;
**     o.dedupe_key = "tap-7";
**     o.policy = OPTIMIST_POLICY_KEEP;
**
** dedupe_key is borrowed for the call (see optimist_mutate); policy is OPTIMIST_POLICY_ROLLBACK or
** OPTIMIST_POLICY_KEEP. Options added later are appended here, so no further optimist_mutate_*
** variant is needed.
*/
typedef struct optimist_mutate_options {
    unsigned int version;           /* OPTIMIST_MUTATE_OPTIONS_VERSION */
    const char *dedupe_key;         /* NULL: none */
    int policy;                     /* OPTIMIST_POLICY_ROLLBACK */
} optimist_mutate_options;

#define OPTIMIST_MUTATE_OPTIONS_VERSION 1
#define OPTIMIST_MUTATE_OPTIONS_INIT { OPTIMIST_MUTATE_OPTIONS_VERSION, NULL, OPTIMIST_POLICY_ROLLBACK }

/*
** optimist_mutate with options (opts NULL: the defaults, as optimist_mutate with no dedupe key).
** optimist_mutate and optimist_mutate_with_policy are this call with the options they take.
**
** Returns what optimist_mutate returns, and OPTIMIST_MISUSE for a version this library does not
** read or a policy that is not one of the OPTIMIST_POLICY_* values.
*/
int optimist_mutate_ext(optimist_store *s, const optimist_batch *b,
                        const optimist_mutate_options *opts, uint64_t *out_id);

/*
** One-op mutations, for the tap that puts one record: optimist_put is optimist_mutate of a
** batch holding only optimist_batch_put(coll, key, json), and optimist_put_fields of one holding
** only optimist_batch_put_fields(coll, key, fields, count), with no dedupe key and the default
** policy, without a batch to build and free. Use optimist_mutate_ext for a dedupe key, another
** policy or more than one op.
**
** The arguments are borrowed for the call and validated as the batch adders validate them; the
** mutation's id goes to *out_id (out_id may be NULL).
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, coll, key or json NULL, fields
** NULL with count > 0); OPTIMIST_INVALID (malformed JSON, not an object, not UTF-8, a number NaN
** or infinite, a put over a limit (LIMITS, above): nothing changes); OPTIMIST_IO (an earlier
** background write failed).
*/
int optimist_put(optimist_store *s, const char *coll, const char *key, const char *json,
                 uint64_t *out_id);
int optimist_put_fields(optimist_store *s, const char *coll, const char *key,
                        const optimist_field *fields, size_t count, uint64_t *out_id);

/*
** The authority accepted mutation id: the confirmed state becomes C := apply(ops, C), where ops
** are server_ops when given (the server's canonical result wins over the prediction) or, with
** server_ops NULL, the mutation's own ops (an own op that no longer applies, such as an incr of
** a field that has become a non-number, is skipped). An empty server_ops batch means the server
** changed nothing. The mutation leaves the pending list (status OPTIMIST_COMMITTED). Commits may
** arrive in any order.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, server_ops not a batch);
** OPTIMIST_NOTFOUND (no such mutation); OPTIMIST_STATE (already committed or rolled back);
** OPTIMIST_INVALID (a server op cannot apply: nothing changes).
*/
int optimist_commit(optimist_store *s, uint64_t id, const optimist_batch *server_ops);

/*
** optimist_commit for a backend that gave records it created keys of its own (a temporary
** id replaced by the server's). renames_json (NULL: none) is a JSON array of
**
**   {"coll":"todos","from":"tmp-1","to":"812"}
**
** applied in order before the commit: each moves the record and its pending layers from the
** temporary key to the server's (every not-yet-ended mutation's ops on the old key are
** rewritten, so a later edit is sent under the real key; listeners hear of both keys), then
** the commit applies server_ops or, with NULL, the mutation's own ops (renamed). This is what
** the sync does with a push result "ok" that carries renames.
**
**     optimist_commit_with_renames(s, id, NULL,
**         "[{\"coll\":\"todos\",\"from\":\"tmp-1\",\"to\":\"812\"}]");
**
** Returns what optimist_commit returns, and OPTIMIST_INVALID for renames_json that is not such
** an array (malformed JSON, a member without string coll, from and to, an empty or over-long
** to). A commit that cannot apply changes nothing, its renames included.
*/
int optimist_commit_with_renames(optimist_store *s, uint64_t id, const optimist_batch *server_ops,
                                 const char *renames_json);

/*
** Mutation id failed: it leaves the pending list (status OPTIMIST_ROLLED_BACK) and the visible
** state is recomputed as if it had never been applied, while every other pending mutation keeps
** its effect. reason (may be NULL) is a message for diagnostics.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store); OPTIMIST_INVALID (reason not
** UTF-8); OPTIMIST_NOTFOUND; OPTIMIST_STATE (already committed or rolled back).
*/
int optimist_rollback(optimist_store *s, uint64_t id, const char *reason);

/*
** An authoritative change from outside (another device, a pull from the server): the ops of b
** apply to the confirmed state, and pending mutations are re-applied on top (a pending op that
** no longer applies is skipped in the visible state; its mutation stays pending). An empty
** batch changes nothing.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, b NULL); OPTIMIST_INVALID (an op
** cannot apply: nothing changes).
*/
int optimist_server_apply(optimist_store *s, const optimist_batch *b);

/* ------------------------------------------------------------------------------------------ */
/* READS                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/*
** Writes the visible record key of collection coll, as canonical JSON, to *out_json (free with
** optimist_free).
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such record); OPTIMIST_MISUSE (NULL or closed store,
** coll, key or out_json NULL); OPTIMIST_INVALID (coll or key not UTF-8).
*/
int optimist_get(optimist_store *s, const char *coll, const char *key, char **out_json);

/*
** As optimist_get, but reads the confirmed state, ignoring pending mutations.
*/
int optimist_get_confirmed(optimist_store *s, const char *coll, const char *key, char **out_json);

/*
** As optimist_get, but into the caller's buffer: nothing is allocated and nothing is to be
** freed, for a read loop that keeps one buffer (Python's binding keeps one per thread).
**
** On OPTIMIST_OK, *out_len is the record's JSON length in bytes, without a NUL. When
** *out_len < cap, buf holds the text and a NUL after it. Otherwise the text did not fit and
** what buf holds is unspecified (a part of it): call again with cap at least *out_len + 1.
** The record may change between the two calls, so check *out_len again. cap 0 with buf NULL
** asks for the length alone.
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such record); OPTIMIST_MISUSE (NULL or closed
** store, coll, key or out_len NULL, buf NULL with cap not 0); OPTIMIST_INVALID (coll or key
** not UTF-8).
*/
int optimist_get_into(optimist_store *s, const char *coll, const char *key, char *buf, size_t cap,
                      size_t *out_len);

/*
** As optimist_get_into, but reads the confirmed state, ignoring pending mutations.
*/
int optimist_get_confirmed_into(optimist_store *s, const char *coll, const char *key, char *buf,
                                size_t cap, size_t *out_len);

/*
** Writes 1 to *out if a not-yet-ended (pending, inflight or failed) mutation touches the record,
** else 0: the flag a user interface dims or badges.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE; OPTIMIST_INVALID (not UTF-8).
*/
int optimist_is_pending(optimist_store *s, const char *coll, const char *key, int *out);

/*
** Writes the visible records of coll whose key starts with prefix (NULL or "": all) to *out_json
** as a JSON array of [key, record] pairs in bytewise key order, e.g. [["a",{"n":1}],["b",{}]].
** limit caps the number of pairs; 0 means no limit. Free *out_json with optimist_free.
**
** Returns OPTIMIST_OK (also for an empty result: "[]"); OPTIMIST_MISUSE; OPTIMIST_INVALID.
*/
int optimist_scan(optimist_store *s, const char *coll, const char *prefix, size_t limit,
                  char **out_json);

/*
** Writes the status of mutation id (OPTIMIST_PENDING ... OPTIMIST_ROLLED_BACK) to *out_status.
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such mutation); OPTIMIST_MISUSE.
*/
int optimist_status(optimist_store *s, uint64_t id, int *out_status);

/*
** Writes the number of not-yet-ended (pending, inflight or failed) mutations to *out.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE.
*/
int optimist_pending_count(optimist_store *s, uint64_t *out);

/* ------------------------------------------------------------------------------------------ */
/* STATUS YOU CAN SEE                                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
** Writes the not-yet-ended mutations to *out_json (free with optimist_free) as a JSON array in
** id order: all of them when status_or_0 is 0, else those whose status is status_or_0
** (OPTIMIST_PENDING, OPTIMIST_INFLIGHT or OPTIMIST_FAILED). Each is an object:
**
**   {"attempts":1, "created_ms":null, "dedupe_key":"tap-7"|null, "id":7,
**    "last_error":"timeout"|null, "next_attempt_ms":1763770001000,
**    "ops":[{"op":"incr","coll":"habits","key":"run","field":"count","delta":1}],
**    "policy":"rollback"|"keep", "retry":0, "status":"pending"}
**
** ops are in the wire form of optimist_outbox_next. attempts counts sends so far; last_error is
** the reason given with the last failure; next_attempt_ms is the time (the caller's clock, as
** passed to optimist_fail) before which optimist_outbox_next does not hand the mutation out: 0
** for a new mutation and for one made due by optimist_retry; retry counts the app's retries
** of a kept failure (the count the sync sends). created_ms is always null: the library never
** reads a clock and the store keeps no creation time. Members may be added in later versions.
**
** Returns OPTIMIST_OK (also for none: "[]"); OPTIMIST_MISUSE (NULL or closed store, out_json
** NULL, status_or_0 not one of the values above: ended mutations are not listed, see
** optimist_mutation and optimist_status); OPTIMIST_ERROR (out of memory).
*/
int optimist_mutations(optimist_store *s, int status_or_0, char **out_json);

/*
** Writes mutation id to *out_json (free with optimist_free) as one object of the form
** optimist_mutations lists: for a not-yet-ended mutation, and for each of the last 1,000 that
** ended (committed or rolled back) since the store was opened, with its final "status" and
** its "last_error": the reason a failed send or optimist_rollback gave, so an app can say why
** a change was undone.
**
**     char *json;
**     if (optimist_mutation(s, id, &json) == OPTIMIST_OK) { show_reason(json); optimist_free(json); }
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such mutation, or one that ended before the last
** 1,000 or before the store was opened: optimist_status still gives its status);
** OPTIMIST_MISUSE (NULL or closed store, out_json NULL); OPTIMIST_ERROR (out of memory).
*/
int optimist_mutation(optimist_store *s, uint64_t id, char **out_json);

/*
** Waits until mutation id settles (OPTIMIST_COMMITTED, OPTIMIST_ROLLED_BACK, or OPTIMIST_FAILED
** under OPTIMIST_POLICY_KEEP) or timeout_ms passes (negative: no limit; 0: look once), and
** writes its status then to *out_status: the final one, or OPTIMIST_PENDING or
** OPTIMIST_INFLIGHT when the time passed first. Any thread may wait; the wait takes no lock a
** writer needs, and wakes when a change ends the mutation (no polling).
**
**     int st;
**     optimist_wait_settled(s, id, 5000, &st);
**     if (st == OPTIMIST_ROLLED_BACK) { ... optimist_mutation(s, id, &json) says why ... }
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such mutation); OPTIMIST_MISUSE (NULL or closed
** store, also when optimist_close ends the wait; out_status NULL).
*/
int optimist_wait_settled(optimist_store *s, uint64_t id, int64_t timeout_ms, int *out_status);

/*
** Explains record key of collection coll: writes to *out_json (free with optimist_free) its
** confirmed value, then each not-yet-ended mutation on it (a layer), oldest first, with the
** record's value after it, and its visible value:
**
**   {"confirmed":{"count":1}|null,
**    "layers":[{"id":7,"ops":[...],"status":"pending","value":{"count":2}|null}, ...],
**    "visible":{"count":2}|null}
**
** A layer's ops are that mutation's ops on this record (wire form, as optimist_outbox_next),
** its value the result of folding them on the value below it by the rule of the visible state
** (an op that cannot apply there is skipped); null means the record is absent (deleted). The
** visible value is what optimist_get returns, the last layer's value when there is one. A
** record nothing knows of gives {"confirmed":null,"layers":[],"visible":null}.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, coll, key or out_json NULL);
** OPTIMIST_INVALID (coll or key not UTF-8); OPTIMIST_ERROR (out of memory).
*/
int optimist_explain(optimist_store *s, const char *coll, const char *key, char **out_json);

/* ------------------------------------------------------------------------------------------ */
/* OUTBOX                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/*
** Hands out the oldest pending mutation that is due at now_ms (not waiting out a backoff) and
** marks it OPTIMIST_INFLIGHT. Writes its id to *out_id and its ops to *out_ops_json (free with
** optimist_free) as a JSON array of op objects:
**
**   {"op":"put","coll":C,"key":K,"value":{...}}
**   {"op":"patch","coll":C,"key":K,"value":{...}}
**   {"op":"delete","coll":C,"key":K}
**   {"op":"incr","coll":C,"key":K,"field":F,"delta":D}
**
** The sender passes (client id, mutation id) to its server as the idempotency key and reports
** back with optimist_commit, optimist_rollback or optimist_fail.
**
** While a background sync runs on the store (optimist_sync_start) it owns the outbox and sends it
** itself, so this call returns OPTIMIST_MISUSE; the hand-driven outbox works again once the sync
** stops. optimist_commit, optimist_rollback, optimist_fail and optimist_retry stay usable.
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (nothing is due); OPTIMIST_MISUSE (NULL or closed store,
** an out-parameter NULL, a sync is running).
*/
int optimist_outbox_next(optimist_store *s, int64_t now_ms, uint64_t *out_id,
                         char **out_ops_json);

/*
** Waits until some mutation is OPTIMIST_PENDING (made, retried, or backing off after a
** transient failure; not inflight) or timeout_ms passes (negative: no limit; 0: look once),
** and writes 1 to *out_ready if one is, 0 if the time passed first. It hands nothing out:
** optimist_outbox_next does, and judges a backing-off mutation's time. What an app that sends
** the outbox to its own backend blocks on between sends, instead of polling:
**
**     int ready;
**     while (optimist_outbox_wait(s, -1, &ready) == OPTIMIST_OK && ready) {
**         if (optimist_outbox_next(s, now_ms(), &id, &ops) == OPTIMIST_NOTFOUND) {
**             sleep_a_little();   // all pending ones back off: optimist_mutations says until when
**             continue;
**         }
**         ... send ops; optimist_commit / optimist_fail ...
**     }
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, also when optimist_close ends
** the wait; out_ready NULL; a sync is running: it sends the outbox itself).
*/
int optimist_outbox_wait(optimist_store *s, int64_t timeout_ms, int *out_ready);

/*
** Sending mutation id (inflight, or pending and sent by other means) failed at now_ms. A
** transient failure (transient != 0) puts it back as PENDING, due again after an exponential
** backoff with jitter counted from now_ms (see optimist_set_retry_policy). A permanent failure,
** or a transient one after the last allowed attempt, is settled by the mutation's policy: it is
** rolled back (OPTIMIST_POLICY_ROLLBACK) or kept visible as OPTIMIST_FAILED
** (OPTIMIST_POLICY_KEEP). reason (may be NULL) is kept for diagnostics.
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND; OPTIMIST_STATE (failed, committed or rolled back
** already); OPTIMIST_MISUSE; OPTIMIST_INVALID (reason not UTF-8).
*/
int optimist_fail(optimist_store *s, uint64_t id, int transient, const char *reason,
                  int64_t now_ms);

/*
** Makes mutation id due again at once: a FAILED mutation becomes PENDING with its attempts reset;
** a PENDING one waiting out a backoff skips the rest of the wait.
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND; OPTIMIST_STATE (inflight, committed or rolled back);
** OPTIMIST_MISUSE.
*/
int optimist_retry(optimist_store *s, uint64_t id);

/* ------------------------------------------------------------------------------------------ */
/* FRESHNESS AND VIEWS                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
** Records that the keys from_key ... to_key (inclusive, bytewise) of coll were loaded from the
** authority at at_ms, for optimist_needs_reload.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL argument, closed store, from_key sorts after
** to_key); OPTIMIST_INVALID (not UTF-8).
*/
int optimist_mark_loaded(optimist_store *s, const char *coll, const char *from_key,
                         const char *to_key, int64_t at_ms);

/*
** Writes 1 to *out if key of coll lies outside every range marked loaded, or only in ranges
** loaded more than max_age_ms before now_ms; else 0.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE; OPTIMIST_INVALID (not UTF-8).
*/
int optimist_needs_reload(optimist_store *s, const char *coll, const char *key, int64_t now_ms,
                          int64_t max_age_ms, int *out);

/*
** Defines (or redefines) view name: an aggregate over the visible records of coll whose key
** starts with prefix (NULL or "": all), kept up to date incrementally on every change. kind is
** "count" (the number of records) or "sum:FIELD" (the sum of the top-level numeric field FIELD;
** records without it, or with a non-number, add 0). A store file keeps its views: after a
** reopen, optimist_view_get answers at once without recomputing (defining it again is allowed).
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL argument, closed store, unknown kind);
** OPTIMIST_INVALID (not UTF-8).
*/
int optimist_view_define(optimist_store *s, const char *name, const char *coll,
                         const char *prefix, const char *kind);

/*
** Writes the current value of view name to *out, in constant time.
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such view); OPTIMIST_MISUSE; OPTIMIST_INVALID.
*/
int optimist_view_get(optimist_store *s, const char *name, double *out);

/* ------------------------------------------------------------------------------------------ */
/* SUBSCRIPTIONS                                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
** A record whose visible value or status changed. Every string is owned by the library and
** valid only during the listener call: copy what you keep.
**
** The member `pending` carries the record's status (OPTIMIST_RECORD_*), not just a flag: the
** library's first release wrote 1 or 0 there, and FAILED (2) was added without changing the
** struct's layout (the ABI of liboptimist.so.1), so code that tests it for non-zero reads it as
** before. A record touched by a kept failure (OPTIMIST_POLICY_KEEP) shows as 2.
*/
typedef struct optimist_change {
    const char *collection;  /* the collection */
    const char *key;         /* the record's key */
    const char *value_json;  /* the new visible record as canonical JSON; NULL when it is gone */
    int pending;             /* the record's status: OPTIMIST_RECORD_CONFIRMED (0), _PENDING
                                (1) or _FAILED (2); non-zero while a not-yet-ended mutation
                                touches it */
    int cause;               /* OPTIMIST_CAUSE_MUTATE ... OPTIMIST_CAUSE_SYNC */
} optimist_change;

/*
** A listener: called with the ctx given to optimist_subscribe and the n (at least 1) changes of
** one state-changing call, in the order the records were first touched. changes and its strings
** are valid only during the call.
*/
typedef void (*optimist_listener)(void *ctx, const optimist_change *changes, size_t n);

/*
** Registers fn to be called once per state-changing call with the records of coll (NULL: every
** collection) whose key starts with prefix (NULL: every key) whose visible value or status
** changed. Writes the subscription's id to *out_sub, for optimist_unsubscribe.
**
** fn runs synchronously on the thread that made the change (for changes made by a background
** sync: the sync's own thread), after the change is visible and outside the store's locks: it
** may read and mutate the store (a mutation from inside a listener notifies listeners in turn,
** recursively). Listeners of one store are called in the order they subscribed. ctx is passed
** back untouched; the caller keeps it alive, and safe to use from any thread that changes the
** store, until the subscription ends (optimist_unsubscribe or optimist_close).
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, fn NULL, out_sub NULL);
** OPTIMIST_INVALID (coll or prefix not UTF-8).
*/
int optimist_subscribe(optimist_store *s, const char *coll, const char *prefix,
                       optimist_listener fn, void *ctx, uint64_t *out_sub);

/*
** Ends subscription sub: its listener is not called for changes made after this returns (a call
** already delivering on another thread may still be running).
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such subscription, or already ended);
** OPTIMIST_MISUSE (NULL or closed store).
*/
int optimist_unsubscribe(optimist_store *s, uint64_t sub);

/* ------------------------------------------------------------------------------------------ */
/* LIVE QUERIES                                                                               */
/* ------------------------------------------------------------------------------------------ */

/*
** A live query is a query over the visible records of one collection, kept equal to its result
** after every call, incrementally: a change to one record costs O(log n) per live query that the
** record enters, leaves or moves in (n: the query's matching records), never a re-run over the
** collection. A screen opens one and redraws from the deltas its listener receives.
**
** The spec is JSON text:
**
**   {"collection": "logs",                              required
**    "range": {"prefix": "2026-11-"} | {"from": K1, "to": K2},   keys, bytewise; from
**                                                        inclusive, to exclusive; either may
**                                                        be left out
**    "where": PREDICATE,
**    "order": [{"field": "day", "desc": true}, ...],     default: key order
**    "limit": 50,
**    "group": {"by": ["habit"],
**              "aggregates": {"n": "count", "total": "sum:minutes", "avg": "avg:minutes",
**                             "first": "min:day", "last": "max:day"}}}
**
** FIELD PATHS name a value in a record: member names joined by "." ("meta.tags"), or a JSON
** array of names (["a.b", "c"]) for names that contain a dot; "$key" is the record's key.
**
** PREDICATES: {"field": F, "eq"|"ne"|"lt"|"le"|"gt"|"ge": V}, {"field": F, "in": [V, ...]},
** {"field": F, "prefix": "text"}, {"field": F, "exists": true|false}, {"and": [P, ...]},
** {"or": [P, ...]}, {"not": P}, and {"status": "confirmed"|"pending"|"failed"}: the record's
** status (as OPTIMIST_RECORD_*), so a query can list "my failed messages".
**
** COMPARISON uses one total order over JSON values: missing < null < false < true < numbers (by
** value; 1 equals 1.0) < strings (bytewise UTF-8) < arrays < objects (arrays and objects by their
** canonical JSON text, bytewise). eq, ne and in use JSON equality. lt, le, gt and ge compare
** numbers with numbers, strings with strings, booleans with booleans; any other pair is false.
** prefix is false on a value that is not a string. A missing field fails every predicate except
** exists:false and ne, which it passes; not inverts.
**
** ORDER: by the order items in turn (desc defaults to false), then by key ascending, so every
** result has one order. With limit, the rows are the first limit of the whole ordered result at
** every moment: when a row inside leaves, the next one enters.
**
** GROUPS: one row per distinct tuple of "by" values (a missing field and null are one group
** value, null in the row), in ascending order of that tuple; limit counts groups; order with
** group is invalid. count counts records; sum and avg use numeric values only (sum of none: 0,
** avg of none: null); min and max use the total order over values present and not null (none:
** null).
**
** ROWS, as JSON: a record row is {"key": K, "value": {...}, "status": "confirmed"|"pending"|
** "failed"}; a group row is {"group": {"habit": "run"}, "values": {"n": 3, "total": 95}}.
**
** DELTAS: a listener receives, once per state-changing call that changed the query's rows, a
** JSON array of deltas which, applied in order to the rows before the call, give the rows after
** it: {"op": "insert", "index": i, "row": ROW}, {"op": "delete", "index": i} and
** {"op": "update", "index": i, "row": ROW} (same key or group, same place, new value, status or
** aggregates). Each index counts after the deltas before it have been applied. A row that
** changes place is a delete then an insert. A call that leaves the rows equal delivers nothing.
**
** The first evaluation reads the visible records of the query's range once, or, when an index
** (optimist_index_define) fits the query's "where", only the records the index points to:
** O(log n + rows) of them, and on a store file without loading the rest of the collection. An
** index fits a where that narrows its field: eq, in, lt, le, gt, ge or prefix on the field,
** alone, as an item of an "and", or in every item of an "or". After that first evaluation a
** change to one record costs O(log n) per query it enters, leaves or moves in, and one
** predicate check per query on its collection; nothing is ever evaluated again. A query keeps
** its rows' keys and sort values (grouped: its groups' aggregates), not copies of the records;
** rows are read from the store when asked for or delivered.
*/
typedef struct optimist_query optimist_query;

/*
** Defines an ordered secondary index on field (a field path, as a spec writes one: dotted, or a
** JSON array of names; not "$key") of the confirmed records of collection coll. It is built
** from the records there now (on a store file, inside the file, without loading them; the
** store's other calls wait meanwhile) and kept up to date on every change after. A store file
** keeps it: after a reopen it is there, not built again. Defining an index that exists does
** nothing.
**
** Example: optimist_index_define(s, "logs", "habit") makes a query with
** "where": {"field": "habit", "eq": "run"} read only the "run" logs when it opens.
**
** Returns OPTIMIST_OK; OPTIMIST_INVALID (coll or field not UTF-8, field empty, "$key", with an
** empty name, or a malformed array); OPTIMIST_IO (the disk failed); OPTIMIST_MISUSE (NULL or
** closed store, coll or field NULL).
*/
int optimist_index_define(optimist_store *s, const char *coll, const char *field);

/*
** Opens a live query on s from spec_json (above) and writes its handle to *out. Close it with
** optimist_query_close; closing the store ends it too (its calls then return OPTIMIST_MISUSE).
**
** Returns OPTIMIST_OK; OPTIMIST_INVALID (spec_json not UTF-8, not JSON, or not a valid spec:
** a missing collection, an unknown member, a wrong type, an unknown status or aggregate, an empty
** "by", a limit below 1, order with group; the message, from optimist_last_error, names the
** offending member); OPTIMIST_MISUSE (NULL or closed store, spec_json or out NULL).
*/
int optimist_query_open(optimist_store *s, const char *spec_json, optimist_query **out);

/*
** Writes the number of rows (records, or groups; at most the spec's limit) to *out.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (q NULL, closed, or its store closed; out NULL).
*/
int optimist_query_count(optimist_query *q, size_t *out);

/*
** Writes the rows at offset on, at most limit of them (0: all), as a JSON array of rows (above)
** to *out_json, a string the caller frees with optimist_free. An offset past the end gives [].
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (q NULL, closed, or its store closed; out_json NULL;
** offset or limit above SIZE_MAX/2).
*/
int optimist_query_rows(optimist_query *q, size_t offset, size_t limit, char **out_json);

/*
** A query listener: called with the ctx given to optimist_query_subscribe and one call's deltas
** (above) as a JSON array of n_deltas (at least 1) deltas; the text is valid only during the call.
*/
typedef void (*optimist_query_listener)(void *ctx, const char *deltas_json, size_t n_deltas);

/*
** Registers fn to be called with the deltas of every call that changes q's rows; there is no
** first call (read the rows with optimist_query_rows first). Writes the subscription's id to
** *out_sub. fn runs as optimist_subscribe's listeners do: on the thread that made the change,
** after it is visible, outside the store's locks, in call order; it may read and change the
** store. ctx is passed back untouched; keep it alive until the subscription ends.
**
** Calls made on two threads at once (a tap on one, the sync's pull on its own) each deliver on
** their own thread, outside the store's locks, so their deltas may reach fn in either order,
** even at once. Each list of deltas applies to the rows as its own call left them, so a mirror
** fed from several threads can drift from the query: read its rows again with
** optimist_query_rows after such overlaps (for example once the sync is idle), or subscribe
** with optimist_query_subscribe_numbered, whose deliveries carry the number that orders them.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (q NULL, closed, or its store closed; fn or out_sub NULL).
*/
int optimist_query_subscribe(optimist_query *q, optimist_query_listener fn, void *ctx, uint64_t *out_sub);

/*
** A numbered query listener: as optimist_query_listener, with number, the delivery's place
** among all of q's deliveries (1, 2, ...): delivery number n + 1 applies to the rows as
** delivery n left them.
*/
typedef void (*optimist_query_numbered_listener)(void *ctx, uint64_t number, const char *deltas_json,
                                                 size_t n_deltas);

/*
** optimist_query_subscribe with numbered deliveries, for a mirror of the rows kept right
** whatever threads the changes come from: apply delivery number n + 1 only after n, keeping one
** that comes early (on another thread, at once) until those before it have come. The numbers a
** subscription gets follow each other with no gap, from *out_delivered + 1 on.
**
** With out_rows_json not NULL, the rows (as optimist_query_rows writes them, all of them) are
** read in the same step as the subscription is made, so no call falls between them: the first
** delivery to apply to them is *out_delivered + 1. Free *out_rows_json with optimist_free.
** With it NULL, nothing is read and *out_delivered is the number of q's last delivery before the
** subscription. out_delivered may be NULL.
**
**   static void on_deltas(void *ctx, uint64_t number, const char *deltas, size_t n) {
**       struct screen *sc = ctx;                  // sc->next starts at delivered + 1
**       hold(sc, number, deltas);                 // keep a copy: the text ends with the call
**       while (have(sc, sc->next)) apply(sc, take(sc, sc->next++));   // under sc's own mutex
**   }
**   char *rows; uint64_t sub, delivered;
**   optimist_query_subscribe_numbered(q, on_deltas, &screen, &sub, &rows, &delivered);
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (q NULL, closed, or its store closed; fn or out_sub NULL).
** On failure no subscription is made and *out_rows_json is not written.
*/
int optimist_query_subscribe_numbered(optimist_query *q, optimist_query_numbered_listener fn, void *ctx,
                                      uint64_t *out_sub, char **out_rows_json, uint64_t *out_delivered);

/*
** Ends subscription sub of q.
**
** Returns OPTIMIST_OK; OPTIMIST_NOTFOUND (no such subscription on q); OPTIMIST_MISUSE (q NULL,
** closed, or its store closed).
*/
int optimist_query_unsubscribe(optimist_query *q, uint64_t sub);

/*
** Closes q: its listeners are not called again and its other calls return OPTIMIST_MISUSE. The
** handle keeps 16 bytes for the life of the process, so that a call made with it after the close
** is caught; do not close a query while another thread is inside a call with it. NULL is a no-op;
** closing twice is a no-op.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (not a query handle).
*/
int optimist_query_close(optimist_query *q);

/* ------------------------------------------------------------------------------------------ */
/* BACKGROUND SYNC                                                                            */
/* ------------------------------------------------------------------------------------------ */

/*
** optimist_sync_start runs one sync per store on a thread the library owns, until
** optimist_sync_stop or optimist_close. It sends the outbox and pulls the server's changes by
** itself, following the wire protocol in docs/protocol.md (POST {url}/push and {url}/pull,
** JSON bodies):
**
**   - PUSH: the due pending mutations in id order, at most max_batch per request, marked
**     OPTIMIST_INFLIGHT while sent. Mutation k+1 never reaches the server before it answered k
**     (a kept failure excepted). An "ok" commits the mutation (the server's canonical ops, when
**     it sends them, become the confirmed state); "rejected" settles it by its policy (rolled
**     back, or kept as OPTIMIST_FAILED); "retry" puts it back as pending after a backoff.
**   - PULL: at start (before the first push), after every push round that settled something,
**     on a poke of the event stream (below), every pull_interval_ms while no stream is live,
**     on optimist_sync_now, and before pushing again after a push whose
**     answer was lost (the server's recorded outcomes then end what it already applied, which is
**     never sent twice): the server's changes enter the confirmed state in one atomic step (as
**     optimist_server_apply), pending mutations are re-applied on top, and the pull cursor is
**     persisted with the store. A reply that says more follow is staged (in the store file for
**     a file store) until the reply that ends the round, which applies the whole round at once:
**     the confirmed state is only ever one the server had. A reply with "reset" (the cursor came
**     from another database or is too old) starts a round from the beginning whose end replaces
**     every confirmed record (removals reach subscribers with OPTIMIST_CAUSE_SERVER; pending
**     mutations stay). A store closed or killed mid-round resumes the round when it syncs again.
**   - SHARED SPACES: the library speaks protocol version 2, where a collection "S/NAME" lives in
**     the shared space S. A pull reply whose "drop" names S (the user left it or was removed)
**     removes, before that reply's changes, every confirmed record of the collections "S/...",
**     "S/$members" included (removals reach subscribers and live queries with
**     OPTIMIST_CAUSE_SERVER). Pending mutations on those records stay pending and visible; the
**     server refuses them later ("forbidden...") and they settle by their policy.
**   - FAILURES never roll anything back: no answer (refused, reset, timeout) puts the request's
**     mutations back as pending, state "offline", and retries after an exponential backoff with
**     jitter (backoff_base_ms doubling up to backoff_max_ms); HTTP 429 and 5xx do the same with
**     state "backoff" (Retry-After honoured); HTTP 401 and 403 pause the sync in state
**     "unauthorized" until optimist_sync_set_headers gives new headers; any other status, or a
**     body that is not the protocol, is state "error" (the reason in "last_error"), tried again
**     after backoff. optimist_sync_now ends any wait at once (the app's "online again").
**   - NARROWING: a push refused whole with HTTP 400, 413 or 422 (its content, which one mutation
**     can cause) is sent again at once as half as many mutations, down to one; one mutation
**     refused that way ends "rejected" with the server's reason (the error body's "error" text)
**     as its last error, settled by its policy, and the sync goes on with the rest. Answered
**     pushes double the batch again, up to max_batch. Other statuses are never narrowed.
**   - EVENTS: with the built-in transport (and events set, the default), the sync keeps one
**     stream open beside it, on a thread of its own: GET {url}/events with the sync's headers
**     and "Accept: text/event-stream" (Server-Sent Events). The server sends "ready" once
**     connected and "poke" whenever something the user sees changed; each makes the sync pull
**     at once (after "ready": whatever changed while no stream was open). A poke does not cut
**     a backoff short (Retry-After stays honoured) nor an "unauthorized" pause. While the
**     stream is live, the sync does not pull every pull_interval_ms; whenever it is not (no
**     stream yet, or it failed), it does. A stream that ends, breaks, or brings nothing, not
**     even a keepalive comment, for 45 s is opened again after a wait of 1 s doubling to 60 s,
**     with jitter; a server without streams (HTTP 404 or 405, or a 200 that is not
**     text/event-stream) is asked again after 2.5 to 5 minutes; HTTP 401 or 403 there pauses
**     the sync in state "unauthorized", as on a push or pull, and the stream is opened again
**     once optimist_sync_set_headers gives new headers. Pokes only ever trigger pulls: a lost
**     stream loses nothing. A host transport (optimist_transport) has no stream: the sync
**     then pulls every pull_interval_ms, as without events.
**
** Every status change the sync makes reaches subscribers (optimist_subscribe) on the sync's
** thread: cause OPTIMIST_CAUSE_SYNC when a mutation is handed to the server or given back to
** pending, OPTIMIST_CAUSE_COMMIT, _ROLLBACK or _FAIL when the server answered, and
** OPTIMIST_CAUSE_SERVER for pulled changes.
**
** While a sync runs, optimist_outbox_next returns OPTIMIST_MISUSE (the sync owns the outbox).
** Every optimist_sync_* function is safe to call from any thread, and optimist_sync_stop,
** optimist_sync_now, optimist_sync_set_headers and optimist_sync_status also from inside the
** sync's callbacks (transport, status listener, and subscription listeners called for the
** sync's changes); optimist_sync_wait_idle must not be called there (it would wait for its own
** thread, and only time out).
*/

/*
** A host transport: sends one request of the sync with the host's own HTTP stack (its sessions,
** proxies, token refresh), instead of the built-in one (libcurl).
**
** Called on the sync's thread, one request at a time, with the ctx given as transport_ctx.
** endpoint is "push" or "pull"; url is the sync's URL with "/push" or "/pull" appended ("" when
** the sync was started without a URL); body is the JSON request body to POST; headers is a
** NULL-terminated array of "Name: value" strings (the sync's headers; the host adds
** "Content-Type: application/json" itself); timeout_ms is how long the request may take. All
** of these are valid during the call only.
**
** The host returns 0 when the server answered: it sets *out_status to the HTTP status and
** *out_body to the body, a NUL-terminated string the host owns and keeps valid until it is
** called again or the sync stops (the library copies it at once; NULL counts as an empty body).
** It may set *out_retry_after_ms (pre-set to -1: none) from a Retry-After header; values are
** capped at a day. It returns non-zero when there was no answer (connection refused or reset,
** timeout, DNS failure): the request's mutations go back to pending and the sync waits before
** trying again ("offline"); *out_body may then point to a message for "last_error".
**
** The call may block, up to timeout_ms. The library cannot interrupt it: optimist_sync_stop and
** optimist_close wait for it to return, and then ignore its answer (nothing of it is applied).
**
** A host transport carries the push and pull requests only, not the event stream (see EVENTS
** above): a sync over one pulls every pull_interval_ms, whatever events says.
*/
typedef int (*optimist_transport)(void *ctx, const char *endpoint, const char *url,
                                  const char *body, const char *const *headers,
                                  int64_t timeout_ms, int *out_status, const char **out_body,
                                  int64_t *out_retry_after_ms);

/*
** A sync status listener: called on the sync's thread, with the ctx given as status_ctx, each
** time the sync's state, last error or counters change, and a last time with state "stopped"
** when the sync ends. status_json is the status as optimist_sync_status gives it, valid during
** the call only.
*/
typedef void (*optimist_sync_listener)(void *ctx, const char *status_json);

/*
** How a sync runs: the argument of optimist_sync_start.
**
** VERSIONING: the struct grows in later versions of the library, only ever by members appended
** at its end, and `version` says which members the caller's struct has. Always initialise it
** with OPTIMIST_SYNC_OPTIONS_INIT (which sets version and every default), then change the
** members you need:
**
**     optimist_sync_options o = OPTIMIST_SYNC_OPTIONS_INIT;
**     o.url = "https://sync.example.com";
**
** A program built against this header keeps working with later libraries (they read the members
** of the struct's version only, and give the later ones their defaults); a library older than
** the header's version refuses the struct with OPTIMIST_MISUSE. This library reads versions 1
** and 2.
**
** events (version 2; 0 or 1, else OPTIMIST_MISUSE) keeps the event stream open while the sync
** runs (1, the default) or not (0: the sync pulls every pull_interval_ms only; see EVENTS
** above). A version 1 struct keeps it open.
**
** Every string and array is borrowed for the call of optimist_sync_start: the library copies
** them. transport_ctx and status_ctx must stay valid, and safe to use from the sync's thread,
** until the sync has stopped (optimist_sync_stop or optimist_close returned).
*/
typedef struct optimist_sync_options {
    unsigned int version;           /* OPTIMIST_SYNC_OPTIONS_VERSION */
    const char *url;                /* the server's base URL, "http://HOST:PORT" or https://...;
                                       NULL (or "") only with a transport */
    const char *const *headers;     /* NULL-terminated array of "Name: value" strings sent with
                                       every request (e.g. "Authorization: Bearer T"), or NULL */
    int64_t pull_interval_ms;       /* 5000; 0 = pull only at start, after pushes and on
                                       optimist_sync_now; at most 31536000000 (a year) */
    uint32_t max_batch;             /* 100: the most mutations one push carries (at least 1) */
    int64_t timeout_ms;             /* 10000: one request's timeout (at least 1) */
    int64_t backoff_base_ms;        /* 500: the first wait after a failed request (1 ms to
                                       86400000, a day) */
    int64_t backoff_max_ms;         /* 30000: the cap on that wait (the base to a day) */
    optimist_transport transport;   /* NULL: the built-in HTTP transport (libcurl) */
    void *transport_ctx;            /* passed back to transport */
    optimist_sync_listener on_status; /* NULL: none */
    void *status_ctx;               /* passed back to on_status */
    /* version 2 */
    int events;                     /* 1: keep the event stream (GET {url}/events) open;
                                       0: poll only */
} optimist_sync_options;

#define OPTIMIST_SYNC_OPTIONS_VERSION 2
#define OPTIMIST_SYNC_OPTIONS_INIT \
    { OPTIMIST_SYNC_OPTIONS_VERSION, NULL, NULL, 5000, 100, 10000, 500, 30000, NULL, NULL, NULL, NULL, 1 }

/*
** HEADERS, wherever a "Name: value" array is taken: each string is split at its first ':', and
** the value's leading spaces and tabs are dropped ("Authorization: Bearer T" is the header
** Authorization with value "Bearer T"). A name must be a non-empty token (no spaces or control
** characters) and a value must not hold a line break. Error messages name a header's position,
** never its text (it may be a secret).
*/

/*
** Starts the store's background sync with the options *opts (see optimist_sync_options). The
** first push or pull starts at once, on the sync's thread; this returns without waiting for it.
** The on_status listener, when given, hears every status the sync publishes from the first one
** (it is registered before the sync's thread starts); it may be called before this returns.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, opts NULL, a version this library
** does not read, a sync already running on the store, neither a url nor a transport, a url that
** is not http:// or https://, a header without ':' or with a bad name or value, max_batch 0,
** timeout_ms or backoff_base_ms below 1, backoff_max_ms below backoff_base_ms or above a day,
** pull_interval_ms negative or above a year, events neither 0 nor 1: optimist_last_error says
** which); OPTIMIST_INVALID
** (url or a header not UTF-8); OPTIMIST_ERROR (the sync's thread could not start).
*/
int optimist_sync_start(optimist_store *s, const optimist_sync_options *opts);

/*
** Stops the store's sync and returns once its thread has ended: a request in progress is
** cancelled (the built-in transport aborts it; a host transport is waited for and its answer
** ignored), its mutations stay queued as pending, the event stream is closed (at once, however
** quiet), and the status listener hears "stopped".
** Nothing runs any more, and optimist_outbox_next works again. Called from inside the sync's
** callbacks, it asks the sync to stop and returns at once. A store may be synced again with
** optimist_sync_start.
**
** Returns OPTIMIST_OK (also when no sync runs); OPTIMIST_MISUSE (NULL or closed store).
*/
int optimist_sync_stop(optimist_store *s);

/*
** The app's "online again": ends any backoff wait and pushes and pulls at once; the event
** stream, when it waits to reconnect, connects at once too.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, no sync running).
*/
int optimist_sync_now(optimist_store *s);

/*
** Replaces the headers sent with every request (headers: a NULL-terminated "Name: value" array,
** or NULL for none), e.g. after a token refresh; ends an "unauthorized" pause. Takes effect
** from the sync's next request, and the event stream's next connection (an open stream is kept;
** one refused with 401 or 403 connects again at once). The strings are copied.
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, no sync running, a header without
** ':' or with a bad name or value: the headers in use are then unchanged); OPTIMIST_INVALID (a
** header not UTF-8).
*/
int optimist_sync_set_headers(optimist_store *s, const char *const *headers);

/*
** Waits up to timeout_ms (0: just looks; INT64_MAX: as long as it takes) until the sync is
** idle: nothing pending or inflight (failed mutations excepted) and a pull has completed after
** the last push. Writes 1 to *out_idle when it is, 0 when the time ran out or the sync stopped
** first. Not from inside the sync's callbacks (see above).
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, no sync running, out_idle NULL,
** timeout_ms negative).
*/
int optimist_sync_wait_idle(optimist_store *s, int64_t timeout_ms, int *out_idle);

/*
** Writes the sync's status to *out_json (free with optimist_free), a JSON object:
**
**   {"cursor":"..."|null, "failed":0, "inflight":0, "last_error":"..."|null, "pending":2,
**    "pulled":5, "pushed":3, "state":"idle", "stream":"live"}
**
** state is "idle" (nothing to send), "pushing", "pulling", "backoff", "offline",
** "unauthorized", "error" (see the section's introduction) or "stopped" (no sync runs: the
** call works then too, with the store's counts and cursor). last_error is the reason of the
** last failure (null after a success); pending, inflight and failed count the store's
** not-yet-ended mutations now; cursor is the persisted pull cursor; pushed (mutations the
** server accepted) and pulled (changes received) count since the sync started (0 when none
** runs). stream is the event stream's state (see EVENTS above): "live" (open, and the server
** said it is ready: pokes bring pulls, and the interval pull rests), "connecting" (no stream at
** the moment: connecting, or waiting to try again; the sync pulls at its interval meanwhile)
** or "off" (no stream is tried: events is 0, a host transport, or no sync runs).
**
** Returns OPTIMIST_OK; OPTIMIST_MISUSE (NULL or closed store, out_json NULL); OPTIMIST_ERROR
** (out of memory).
*/
int optimist_sync_status(optimist_store *s, char **out_json);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPTIMIST_H */
