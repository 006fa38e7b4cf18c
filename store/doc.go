// Package store is claudeops' durable state in SQLite (mattn/go-sqlite3):
// versioned migrations, WAL and per-connection pragmas, and every record the
// bot keeps — threads and their Claude sessions, approvals, rules,
// schedules and runs, usage, sync cursors and processed event ids. It holds
// no business rules.
package store
