/* The pessimistic flow in C: a WAL SQLite database (synchronous=NORMAL, prepared statements).
 * A tap writes one log row in a transaction, then reads every log back and recounts today:
 * the heavy reload reads all six columns of text rows (key, habit, day, a ~40-byte note ...);
 * the lean one keeps the five narrow columns the screen needs as integers in a table of its own. */
#ifndef OPTIMIST_BENCH_RELOAD_H
#define OPTIMIST_BENCH_RELOAD_H

typedef struct reload_db reload_db;

reload_db *reload_open(const char *path, int n);
/* One tap of habit `habit` today (`day`, from tap_pick); returns today's recomputed count. */
int reload_tap(reload_db *r, const char *day, const char *habit, int seq);
/* The same tap on the lean table. */
int reload_tap_lean(reload_db *r, const char *day, const char *habit, int seq);
/* The same tap, timing its write transaction and its SELECT-all recount separately. */
int reload_tap_split(reload_db *r, const char *day, const char *habit, int seq,
                     unsigned long long *write_ns, unsigned long long *read_ns);
/* Untimed clean-up after a tap, so every repetition sees the same n. */
void reload_undo(reload_db *r, int seq);
void reload_undo_lean(reload_db *r, int seq);
void reload_close(reload_db *r);

#endif
