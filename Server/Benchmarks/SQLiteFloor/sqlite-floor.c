/*
 * The floor of event ingest on SQLite: the rows `ingest-benchmark.sh` sends, stored by SQLite
 * alone from a C loop, with vane's schema, pragmas and durability (WAL, synchronous = FULL, one
 * transaction per group of GROUP events), and nothing else: no HTTP, no JSON request body, no
 * experiment sums. It links the very SQLite vane links: the object SwiftPM compiled from
 * SQLiteNIO's amalgamation, with SQLiteNIO's flags, in the build folder (a `.build` whose
 * checkouts another package's resolution has since replaced still holds it). `ingest-benchmark.sh`
 * builds it with the toolchain's clang and runs `transaction` beside vane's rows in every table.
 * By hand:
 *
 *   clang -O2 -o /tmp/sqlite-floor Server/Benchmarks/SQLiteFloor/sqlite-floor.c \
 *       Server/.build-release/x86_64-unknown-linux-gnu/release/VaporCSQLite.build/sqlite_nio_sqlite3.c.o \
 *       -lpthread -lm
 *   /tmp/sqlite-floor DIR MODE [GROUPS] [GROUP]      (default 300 groups of 800 events)
 *
 * MODE: `jsonb` — the rows as one JSON array read by `jsonb_each` (what vane binds);
 *       `transaction` — what vane's transaction does per group, in vane's statements: the `jsonb`
 *       insert, `changes()`, the tally's row read, the group's units read, their earlier metric
 *       events read (the replay), the units written back through `jsonb_each` (vane's state text
 *       per unit) and the tally updated (texts the size of vane's sums and readings). Only
 *       vane's Swift work between the statements is left out;
 *       `json` — the same through `json_each` (what vane bound before);
 *       `row` — one prepared INSERT stepped per row with bound values (the least SQLite does).
 * Prints the CPU time (user + system) per event and the events per second of the loop.
 *
 * Built as the `SQLiteFloor` target (with SQLITE_FLOOR_LIBRARY, no `main`), it is also the
 * database half of `vane-http-baseline`'s `POST /events-stored`: `sqlite_floor_open` and
 * `sqlite_floor_store` (include/SQLiteFloor.h) run the same `transaction` for a group of
 * requests' events, from the server's writer thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
// The functions the loop calls, as SQLiteNIO's amalgamation exports them (its names carry the
// `sqlite_nio_` prefix); declared here, as the header stays in a checkout a build folder may no
// longer hold.
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef long long sqlite3_int64;
#define SQLITE_ROW 100
#define SQLITE_DONE 101
#define SQLITE_STATIC ((void (*)(void *))0)
#define S(x) sqlite_nio_sqlite3_##x
int S(open)(const char *path, sqlite3 **db);
int S(close)(sqlite3 *db);
int S(exec)(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *argument, char **error);
const char *S(errmsg)(sqlite3 *db);
int S(prepare_v2)(sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail);
int S(step)(sqlite3_stmt *statement);
int S(reset)(sqlite3_stmt *statement);
int S(bind_double)(sqlite3_stmt *statement, int index, double value);
int S(bind_int64)(sqlite3_stmt *statement, int index, sqlite3_int64 value);
int S(bind_null)(sqlite3_stmt *statement, int index);
int S(bind_text)(sqlite3_stmt *statement, int index, const char *text, int bytes, void (*destructor)(void *));
int S(column_count)(sqlite3_stmt *statement);
const unsigned char *S(column_text)(sqlite3_stmt *statement, int column);
sqlite3_int64 S(last_insert_rowid)(sqlite3 *db);

static sqlite3 *db;

static void run(const char *sql) {
    char *error = 0;
    if (S(exec)(db, sql, 0, 0, &error)) {
        fprintf(stderr, "%s: %s\n", sql, error);
        exit(1);
    }
}

#ifndef SQLITE_FLOOR_LIBRARY
static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
#endif

typedef struct {
    char id[48], unit[48];
    const char *name;
    long long time;
    int metric;
    double value;
} Event;

// A group of `count` events shaped like the benchmark's batches: per new unit an exposure, one or
// two session_started events, and a purchase for one unit in five.
static void make_group(Event *events, int count, int group) {
    int n = 0, k = 0;
    while (n < count) {
        int worker = n / 100;
        char unit[48];
        snprintf(unit, sizeof unit, "u-%d-%d-%d", worker, group, k++);
        long long t = 1700000000000LL + rand() % 60000;
        Event *e = &events[n++];
        snprintf(e->id, sizeof e->id, "x-%d-%d-%d", worker, group, k);
        strcpy(e->unit, unit);
        e->time = t;
        e->metric = 0;
        for (int s = 0; s < 1 + rand() % 2 && n < count; s++) {
            e = &events[n++];
            snprintf(e->id, sizeof e->id, "s-%d-%d-%d-%d", worker, group, k, s);
            strcpy(e->unit, unit);
            e->time = t + 60000 + s;
            e->metric = 1;
            e->name = "session_started";
            e->value = 1;
        }
        if (rand() % 5 == 0 && n < count) {
            e = &events[n++];
            snprintf(e->id, sizeof e->id, "p-%d-%d-%d", worker, group, k);
            strcpy(e->unit, unit);
            e->time = t + 120000;
            e->metric = 1;
            e->name = "purchase";
            e->value = 42.5;
        }
    }
}

// Migration 6's per-experiment state, and the statements ExperimentTallyStore runs per group.
static sqlite3_stmt *changes_stmt, *tally_read, *units_read, *replay_read, *units_write, *tally_write;
static char *units_text, *unit_rows, tally_text[1400], history_text[1000];

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *statement;
    if (S(prepare_v2)(db, sql, -1, &statement, 0)) {
        fprintf(stderr, "%s: %s\n", sql, S(errmsg)(db));
        exit(1);
    }
    return statement;
}

static void prepare_transaction(void) {
    run("CREATE TABLE experiment_tallies (project_id TEXT NOT NULL, environment_id TEXT NOT NULL, "
        "experiment_key TEXT NOT NULL, tally TEXT NOT NULL, update_time BIGINT NOT NULL, always_valid TEXT, "
        "PRIMARY KEY (project_id, environment_id, experiment_key))");
    run("CREATE TABLE experiment_units (environment_number BIGINT NOT NULL, experiment_key TEXT NOT NULL, unit_id TEXT NOT NULL, variant TEXT NOT NULL, first_exposure BIGINT NOT NULL, "
        "several_variants BIGINT NOT NULL, totals TEXT NOT NULL, "
        "PRIMARY KEY (environment_number, experiment_key, unit_id))");
    // Sums and readings the size vane stores for the benchmark's experiment (three metrics).
    memset(tally_text, 'x', sizeof tally_text - 1);
    memset(history_text, 'y', sizeof history_text - 1);
    run("INSERT INTO experiment_tallies VALUES ('bench', 'prod', 'checkout', '{}', 0, NULL)");
    changes_stmt = prepare("SELECT changes() AS stored, last_insert_rowid() AS last");
    tally_read = prepare("SELECT tally, always_valid FROM experiment_tallies "
                         "WHERE project_id = 'bench' AND environment_id = 'prod' AND experiment_key = 'checkout'");
    units_read = prepare("SELECT unit_id, variant, first_exposure, several_variants, totals FROM experiment_units "
                         "WHERE environment_number = 1 AND experiment_key = 'checkout' "
                         "AND unit_id IN (SELECT value FROM json_each(?1))");
    replay_read = prepare("SELECT unit_id, metric_name, event_time, metric_value FROM experiment_events "
                          "WHERE environment_number = 1 "
                          "AND unit_id IN (SELECT value FROM json_each(?1)) AND event_type = 'metric' "
                          "AND metric_name IN ('purchase', 'session_started') AND rowid < ?2");
    units_write = prepare("INSERT INTO experiment_units (environment_number, experiment_key, unit_id, variant, "
                          "first_exposure, several_variants, totals) SELECT 1, 'checkout', value ->> 0, "
                          "value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM jsonb_each(?1) WHERE true "
                          "ON CONFLICT (environment_number, experiment_key, unit_id) DO UPDATE SET "
                          "variant = excluded.variant, first_exposure = excluded.first_exposure, "
                          "several_variants = excluded.several_variants, totals = excluded.totals");
    tally_write = prepare("UPDATE experiment_tallies SET tally = ?1, always_valid = ?2, update_time = ?3 "
                          "WHERE project_id = 'bench' AND environment_id = 'prod' AND experiment_key = 'checkout'");
}

static void step_all(sqlite3_stmt *statement) {
    int code;
    while ((code = S(step)(statement)) == SQLITE_ROW) {
        for (int c = 0; c < S(column_count)(statement); c++) S(column_text)(statement, c);
    }
    if (code != SQLITE_DONE) {
        fprintf(stderr, "%s\n", S(errmsg)(db));
        exit(1);
    }
    S(reset)(statement);
}

// The statements vane runs after the insert: every unit of the benchmark's groups is new, so
// every one is read (none found), replayed (no earlier events) and written.
static void count_group(Event *events, int count) {
    step_all(changes_stmt);
    step_all(tally_read);
    char *p = units_text, *q = unit_rows;
    *p++ = '[';
    *q++ = '[';
    int units = 0;
    for (int i = 0; i < count; i++) {
        if (i > 0 && strcmp(events[i].unit, events[i - 1].unit) == 0) continue;
        p += sprintf(p, "%s\"%s\"", units ? "," : "", events[i].unit);
        q += sprintf(q, "%s[\"%s\",\"new\",%lld,0,\"purchase 0 0.0;session_started 1 1.0\"]", units ? "," : "",
                     events[i].unit, events[i].time);
        units++;
    }
    *p++ = ']';
    *p = 0;
    *q++ = ']';
    *q = 0;
    S(bind_text)(units_read, 1, units_text, -1, SQLITE_STATIC);
    step_all(units_read);
    S(bind_text)(replay_read, 1, units_text, -1, SQLITE_STATIC);
    S(bind_int64)(replay_read, 2, S(last_insert_rowid)(db) - count + 1);
    step_all(replay_read);
    S(bind_text)(units_write, 1, unit_rows, -1, SQLITE_STATIC);
    step_all(units_write);
    S(bind_text)(tally_write, 1, tally_text, -1, SQLITE_STATIC);
    S(bind_text)(tally_write, 2, history_text, -1, SQLITE_STATIC);
    S(bind_int64)(tally_write, 3, 1700000000000LL);
    step_all(tally_write);
}

static void open_database(const char *directory) {
    char path[4096];
    snprintf(path, sizeof path, "%s/sqlite-floor.db", directory);
    for (int i = 0; i < 3; i++) {
        char file[4200];
        snprintf(file, sizeof file, "%s%s", path, (const char *[]){"", "-wal", "-shm"}[i]);
        remove(file);
    }
    if (S(open)(path, &db)) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    run("PRAGMA journal_mode = WAL");
    run("PRAGMA synchronous = FULL");
    run("PRAGMA temp_store = MEMORY");
    run("PRAGMA cache_size = -32768");
    run("PRAGMA wal_autocheckpoint = 8000");
    // Migration 18: the table, its primary key, the receipt index and the metric events' unit index,
    // keyed by the environment's number (1 here).
    run("CREATE TABLE experiment_events (environment_number BIGINT NOT NULL, event_id TEXT NOT NULL, event_type TEXT NOT NULL, unit_id TEXT NOT NULL, event_time BIGINT NOT NULL, "
        "receive_time BIGINT NOT NULL, experiment_key TEXT, variant TEXT, flag_key TEXT, template_version BIGINT, "
        "metric_name TEXT, metric_value DOUBLE PRECISION, properties TEXT, "
        "PRIMARY KEY (environment_number, event_id))");
    run("CREATE INDEX experiment_events_by_receipt ON experiment_events (environment_number, receive_time, event_id)");
    run("CREATE INDEX experiment_events_by_unit ON experiment_events (environment_number, unit_id, event_time) "
        "WHERE event_type = 'metric'");
}

static const char *insert_columns = "INSERT INTO experiment_events (environment_number, receive_time, event_id, "
                                    "event_type, unit_id, event_time, experiment_key, variant, flag_key, "
                                    "template_version, metric_name, metric_value, properties) ";

// The insert of a group's rows bound as one JSON array, read by `each` (`jsonb_each`, as vane).
static void json_insert(char *sql, size_t size, const char *each) {
    snprintf(sql, size,
             "%s SELECT ?1, ?2, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, "
             "value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10 FROM %s(?3) WHERE true "
             "ON CONFLICT (environment_number, event_id) DO NOTHING",
             insert_columns, each);
}

// The rows of `count` events as one JSON array, as vane binds them.
static void write_rows(char *text, Event *events, int count) {
    char *p = text;
    *p++ = '[';
    for (int i = 0; i < count; i++) {
        Event *e = &events[i];
        if (e->metric)
            p += sprintf(p, "%s[\"%s\",\"metric\",\"%s\",%lld,null,null,null,null,\"%s\",%g,null]", i ? "," : "",
                         e->id, e->unit, e->time, e->name, e->value);
        else
            p += sprintf(p, "%s[\"%s\",\"exposure\",\"%s\",%lld,\"checkout\",\"new\",null,1,null,null,null]",
                         i ? "," : "", e->id, e->unit, e->time);
    }
    *p++ = ']';
    *p = 0;
}

#ifdef SQLITE_FLOOR_LIBRARY
#include "SQLiteFloor.h"

static sqlite3_stmt *library_insert;
static Event *library_events;
static char *library_text;
static int library_groups;

void sqlite_floor_open(const char *directory) {
    open_database(directory);
    prepare_transaction();
    char sql[2048];
    json_insert(sql, sizeof sql, "jsonb_each");
    library_insert = prepare(sql);
    library_events = malloc(sizeof(Event) * SQLITE_FLOOR_MAXIMUM_GROUP);
    library_text = malloc((size_t)SQLITE_FLOOR_MAXIMUM_GROUP * 200 + 2);
    units_text = malloc((size_t)SQLITE_FLOOR_MAXIMUM_GROUP * 60 + 2);
    unit_rows = malloc((size_t)SQLITE_FLOOR_MAXIMUM_GROUP * 160 + 2);
    srand(1);
}

void sqlite_floor_store(int count) {
    if (count < 1 || count > SQLITE_FLOOR_MAXIMUM_GROUP) {
        fprintf(stderr, "sqlite_floor_store: %d events, expected 1 to %d\n", count, SQLITE_FLOOR_MAXIMUM_GROUP);
        exit(1);
    }
    int group = library_groups++;
    make_group(library_events, count, group);
    write_rows(library_text, library_events, count);
    run("BEGIN IMMEDIATE");
    S(bind_int64)(library_insert, 1, 1);
    S(bind_int64)(library_insert, 2, 1700000000000LL + group);
    S(bind_text)(library_insert, 3, library_text, -1, SQLITE_STATIC);
    if (S(step)(library_insert) != SQLITE_DONE) {
        fprintf(stderr, "%s\n", S(errmsg)(db));
        exit(1);
    }
    S(reset)(library_insert);
    count_group(library_events, count);
    run("COMMIT");
}
#else
int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR jsonb|json|row|transaction [GROUPS] [GROUP]\n", argv[0]);
        return 64;
    }
    const char *mode = argv[2];
    int groups = argc > 3 ? atoi(argv[3]) : 300, count = argc > 4 ? atoi(argv[4]) : 800;
    open_database(argv[1]);
    char sql[2048];
    int json = strcmp(mode, "row") != 0;
    int transaction = strcmp(mode, "transaction") == 0;
    if (json) {
        json_insert(sql, sizeof sql, strcmp(mode, "json") == 0 ? "json_each" : "jsonb_each");
        if (transaction) prepare_transaction();
    } else {
        snprintf(sql, sizeof sql, "%s VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
                 "ON CONFLICT (environment_number, event_id) DO NOTHING", insert_columns);
    }
    sqlite3_stmt *insert;
    if (S(prepare_v2)(db, sql, -1, &insert, 0)) {
        fprintf(stderr, "%s\n", S(errmsg)(db));
        return 1;
    }
    Event *events = malloc(sizeof(Event) * count);
    char *text = malloc((size_t)count * 200 + 2);
    units_text = malloc((size_t)count * 60 + 2);
    unit_rows = malloc((size_t)count * 160 + 2);
    srand(1);
    double cpu = 0, wall = 0;
    for (int g = 0; g < groups; g++) {
        make_group(events, count, g);
        double cpu0 = cpu_seconds(), wall0 = now_seconds();
        // The rows' JSON is written inside the timing, as vane writes it per group.
        if (json) write_rows(text, events, count);
        run("BEGIN IMMEDIATE");
        if (json) {
            S(bind_int64)(insert, 1, 1);
            S(bind_int64)(insert, 2, 1700000000000LL + g);
            S(bind_text)(insert, 3, text, -1, SQLITE_STATIC);
            if (S(step)(insert) != SQLITE_DONE) {
                fprintf(stderr, "%s\n", S(errmsg)(db));
                return 1;
            }
            S(reset)(insert);
        } else {
            for (int i = 0; i < count; i++) {
                Event *e = &events[i];
                S(bind_int64)(insert, 1, 1);
                S(bind_int64)(insert, 2, 1700000000000LL + g);
                S(bind_text)(insert, 3, e->id, -1, SQLITE_STATIC);
                S(bind_text)(insert, 4, e->metric ? "metric" : "exposure", -1, SQLITE_STATIC);
                S(bind_text)(insert, 5, e->unit, -1, SQLITE_STATIC);
                S(bind_int64)(insert, 6, e->time);
                if (e->metric) {
                    for (int c = 7; c <= 10; c++) S(bind_null)(insert, c);
                    S(bind_text)(insert, 11, e->name, -1, SQLITE_STATIC);
                    S(bind_double)(insert, 12, e->value);
                } else {
                    S(bind_text)(insert, 7, "checkout", -1, SQLITE_STATIC);
                    S(bind_text)(insert, 8, "new", -1, SQLITE_STATIC);
                    S(bind_null)(insert, 9);
                    S(bind_int64)(insert, 10, 1);
                    S(bind_null)(insert, 11);
                    S(bind_null)(insert, 12);
                }
                S(bind_null)(insert, 13);
                if (S(step)(insert) != SQLITE_DONE) {
                    fprintf(stderr, "%s\n", S(errmsg)(db));
                    return 1;
                }
                S(reset)(insert);
            }
        }
        if (transaction) count_group(events, count);
        run("COMMIT");
        cpu += cpu_seconds() - cpu0;
        wall += now_seconds() - wall0;
    }
    long total = (long)groups * count;
    printf("| SQLite alone (C), %s, %d groups of %d | %.0f events/s | %.2f µs CPU per event |\n", mode, groups, count,
           total / wall, cpu / total * 1e6);
    S(close)(db);
    return 0;
}
#endif
