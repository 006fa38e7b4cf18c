// Package store is claudeops' durable state in SQLite (mattn/go-sqlite3):
// versioned migrations, WAL and per-connection pragmas, and every record the
// bot keeps — threads and their Claude sessions, approvals, rules,
// schedules and runs, usage, sync cursors and processed event ids. It holds
// no business rules.
//
// Invariants:
//
//   - Two pools over one file, in the manner of go.mau.fi/util/dbutil: a write
//     pool of exactly one connection whose transactions begin IMMEDIATE
//     (so a transaction never fails to upgrade from read to write), and a
//     read-only pool (mode=ro) for queries. WAL lets the readers run beside
//     the writer.
//   - Every connection of both pools is opened with journal_mode=WAL,
//     busy_timeout=10000 ms, foreign_keys=ON and synchronous=FULL: a
//     committed write survives power loss, and a write that meets another
//     process's lock waits up to 10 s instead of failing.
//   - The schema version is PRAGMA user_version. Each migration runs in its
//     own transaction together with the version bump, so a crash leaves the
//     database at a whole version. A database newer than this binary is
//     refused with an error wrapping ErrNewerSchema.
//   - Times are stored as UTC Unix milliseconds; the zero time.Time is stored
//     as NULL. Times come back in UTC, truncated to the millisecond.
//   - A damaged database is never replaced nor removed here: Examine and
//     CheckFile only read.
//   - Every method takes ctx first, is safe for concurrent use, and wraps its
//     errors with the operation and the record's key.
//
// # Files
//
//   - store.go: Open, the two pools, times stored; migrate.go: the
//     versioned migrations.
//   - threads.go: threads and their sessions, channels (working
//     directory, bound repository); mcpservers.go: the operator's MCP
//     servers an admin gave a channel; facts.go: a channel's facts
//     (`remember`), bounded in count and length; messages.go: the messages received
//     (the dedupe) and whether each was settled; catchup.go: what the
//     catch-up reads back.
//   - turns.go: turns with their usage and cost; spend.go: a thread's
//     turns, for its spend.
//   - approvals.go, rules.go: approvals, rules and the audit log.
//   - schedules.go: schedules and their runs; runsettle.go: a run's
//     thread, and the runs a stopped bot left running, settled at start; accounts.go: chat accounts
//     and sync cursors; processes.go: the processes of live sessions;
//     toollines.go: the tool lines shown running.
//   - lock.go: the lock that makes one process the database's owner (an
//     exclusive flock on <db>.lock naming its holder; not taken by Open,
//     so that others may read).
//   - private.go: files created private; probe.go: a write probe for
//     readiness; reserve.go: disk space kept beside the database, given
//     back on a full disk for the records of what threads were shown;
//     backup.go: the online backup (SQLite's backup API);
//     restore.go: a backup checked and put in place of the database
//     (Restore, for `claudeops restore`), the old files kept aside.
//   - integrity.go: SQLite's quick_check and integrity_check of a file on
//     a connection of its own, and Examine, the check before a bot opens
//     its database (damaged, or missing or empty where one is expected:
//     ErrDamaged); mark.go: the mark beside the database (<db>.mark) that
//     says one is expected there and whether its last owner closed it.
//   - faults.go: FaultCause, which errors are the storage failing
//     (damaged, read-only, full, I/O), and Faults, which logs each cause
//     once and says when storage works again.
package store
