// SQLite alone running vane's ingest transaction (sqlite-floor.c `transaction`), as a library for
// vane-http-baseline's POST /events-stored. Call from one thread only; errors end the process
// (it is a benchmark's floor).
#ifndef SQLITE_FLOOR_H
#define SQLITE_FLOOR_H

/// Events one `sqlite_floor_store` takes at most (vane's `maximumEventsPerTransaction`).
#define SQLITE_FLOOR_MAXIMUM_GROUP 5000

/// Creates `directory/sqlite-floor.db` afresh with vane's schema and pragmas.
void sqlite_floor_open(const char *directory);

/// Stores `count` new events shaped like ingest-benchmark.sh's batches in one transaction, with
/// the statements vane's transaction runs for them (the insert, the tally and units read, the
/// replay read, the units and tally written), and commits.
void sqlite_floor_store(int count);

#endif
