package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrNewerSchema is wrapped by Open's error when the database was written by
// a newer claudeops than this one.
var ErrNewerSchema = errors.New("database schema is newer than this claudeops")

// SchemaVersionError reports a database whose schema version (Have) is
// newer than the newest this binary knows (Known). It matches ErrNewerSchema
// under errors.Is.
type SchemaVersionError struct {
	Have, Known int
}

func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this claudeops (%d); upgrade claudeops or use another CLAUDEOPS_DB",
		e.Have, e.Known)
}

// Unwrap makes errors.Is(err, ErrNewerSchema) hold.
func (e *SchemaVersionError) Unwrap() error { return ErrNewerSchema }

// migration is one schema step. Migration i (0-based) takes the database from
// user_version i to i+1. Never edit or reorder a released migration; append.
type migration struct {
	name string
	up   func(ctx context.Context, tx *sql.Tx) error
}

// sqlMigration is a migration made of SQL statements.
func sqlMigration(name, statements string) migration {
	return migration{name: name, up: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, statements)
		return err
	}}
}

// SchemaVersion is the schema version this binary migrates databases to.
func SchemaVersion() int { return len(migrations) }

// migrate applies the migrations db lacks, each in its own write transaction
// that also sets user_version. The version is read inside that transaction,
// under the write lock, so processes opening the same file at once apply each
// step exactly once.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	for {
		applied, err := migrateStep(ctx, db, ms)
		if err != nil || !applied {
			return err
		}
	}
}

// migrateStep applies the next migration, if there is one; it reports whether
// it applied one.
func migrateStep(ctx context.Context, db *sql.DB, ms []migration) (bool, error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return false, fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("migrate: read schema version: %w", err)
	}
	switch {
	case v > len(ms):
		return false, &SchemaVersionError{Have: v, Known: len(ms)}
	case v < 0:
		return false, fmt.Errorf("migrate: negative schema version %d", v)
	case v == len(ms):
		return false, nil
	}
	m := ms[v]
	if err := m.up(ctx, tx); err != nil {
		return false, fmt.Errorf("migrate to version %d (%s): %w", v+1, m.name, err)
	}
	// PRAGMA takes no bound parameters; v+1 is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return false, fmt.Errorf("migrate to version %d (%s): set version: %w", v+1, m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate to version %d (%s): commit: %w", v+1, m.name, err)
	}
	return true, nil
}

// migrations is the schema, oldest first. Cross-record keys (a turn's
// thread_key, an approval's thread_key, …) are deliberately not foreign keys:
// the bot records turns, approvals and audit entries for threads it may not
// have saved yet, and a refused attempt must be auditable whatever it names.
var migrations = []migration{
	sqlMigration("initial schema", `
CREATE TABLE received_messages (
	platform    TEXT NOT NULL,
	key         TEXT NOT NULL,
	thread_key  TEXT NOT NULL DEFAULT '',
	user_id     TEXT NOT NULL DEFAULT '',
	text        TEXT NOT NULL DEFAULT '',
	received_at INTEGER,
	PRIMARY KEY (platform, key)
);
CREATE INDEX received_messages_received_at ON received_messages (received_at);

CREATE TABLE threads (
	key           TEXT PRIMARY KEY,
	platform      TEXT NOT NULL DEFAULT '',
	channel       TEXT NOT NULL DEFAULT '',
	thread_id     TEXT NOT NULL DEFAULT '',
	started_by    TEXT NOT NULL DEFAULT '',
	session_id    TEXT NOT NULL DEFAULT '',
	cwd           TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',
	mode          TEXT NOT NULL DEFAULT '',
	state         TEXT NOT NULL DEFAULT '',
	created_at    INTEGER,
	last_activity INTEGER
);
CREATE INDEX threads_last_activity ON threads (last_activity);

CREATE TABLE channels (
	key        TEXT PRIMARY KEY,
	cwd        TEXT NOT NULL DEFAULT '',
	updated_by TEXT NOT NULL DEFAULT '',
	updated_at INTEGER
);

CREATE TABLE turns (
	id                    INTEGER PRIMARY KEY,
	thread_key            TEXT NOT NULL DEFAULT '',
	channel_key           TEXT NOT NULL DEFAULT '',
	session_id            TEXT NOT NULL DEFAULT '',
	prompt                TEXT NOT NULL DEFAULT '',
	started_at            INTEGER,
	ended_at              INTEGER,
	result_subtype        TEXT NOT NULL DEFAULT '',
	is_error              INTEGER NOT NULL DEFAULT 0,
	cost_usd              REAL NOT NULL DEFAULT 0,
	input_tokens          INTEGER NOT NULL DEFAULT 0,
	output_tokens         INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
	cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
	duration_ms           INTEGER NOT NULL DEFAULT 0,
	num_turns             INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX turns_thread_ended ON turns (thread_key, ended_at);
CREATE INDEX turns_channel_ended ON turns (channel_key, ended_at);

CREATE TABLE approvals (
	id           TEXT PRIMARY KEY,
	request_id   TEXT NOT NULL DEFAULT '',
	thread_key   TEXT NOT NULL DEFAULT '',
	channel_key  TEXT NOT NULL DEFAULT '',
	session_id   TEXT NOT NULL DEFAULT '',
	tool         TEXT NOT NULL DEFAULT '',
	input        TEXT NOT NULL DEFAULT '',
	input_digest TEXT NOT NULL DEFAULT '',
	asked_by     TEXT NOT NULL DEFAULT '',
	kind         TEXT NOT NULL DEFAULT '',
	state        TEXT NOT NULL DEFAULT '',
	decided_by   TEXT NOT NULL DEFAULT '',
	choice       TEXT NOT NULL DEFAULT '',
	scope        TEXT NOT NULL DEFAULT '',
	reason       TEXT NOT NULL DEFAULT '',
	prompt_ref   TEXT NOT NULL DEFAULT '',
	created_at   INTEGER,
	expires_at   INTEGER,
	decided_at   INTEGER
);
CREATE INDEX approvals_pending ON approvals (created_at) WHERE state = 'pending';

CREATE TABLE rules (
	id         INTEGER PRIMARY KEY AUTOINCREMENT, -- never reuse a deleted rule's id
	scope      TEXT NOT NULL DEFAULT '',
	scope_key  TEXT NOT NULL DEFAULT '',
	effect     TEXT NOT NULL DEFAULT '',
	tool       TEXT NOT NULL DEFAULT '',
	pattern    TEXT NOT NULL DEFAULT '',
	created_by TEXT NOT NULL DEFAULT '',
	created_at INTEGER
);

CREATE TABLE audit (
	id         INTEGER PRIMARY KEY,
	at         INTEGER,
	thread_key TEXT NOT NULL DEFAULT '',
	user_id    TEXT NOT NULL DEFAULT '',
	action     TEXT NOT NULL DEFAULT '',
	target     TEXT NOT NULL DEFAULT '',
	detail     TEXT NOT NULL DEFAULT '',
	allowed    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_thread_at ON audit (thread_key, at);
`),
	// Schedules and their runs. UNIQUE (schedule_id, slot) is what makes each
	// scheduled time of a schedule run at most once, whichever process claims
	// it first (see ClaimRun). Runs go with their schedule.
	sqlMigration("schedules and runs", `
CREATE TABLE schedules (
	id              INTEGER PRIMARY KEY AUTOINCREMENT, -- never reuse a deleted schedule's id
	spec            TEXT NOT NULL DEFAULT '',
	time_zone       TEXT NOT NULL DEFAULT '',
	prompt          TEXT NOT NULL DEFAULT '',
	platform        TEXT NOT NULL DEFAULT '',
	channel         TEXT NOT NULL DEFAULT '',
	cwd             TEXT NOT NULL DEFAULT '',
	model           TEXT NOT NULL DEFAULT '',
	created_by      TEXT NOT NULL DEFAULT '',
	approval_policy TEXT NOT NULL DEFAULT '',
	timeout_ms      INTEGER NOT NULL DEFAULT 0,
	overlap         TEXT NOT NULL DEFAULT '',
	catch_up_ms     INTEGER NOT NULL DEFAULT 0,
	paused          INTEGER NOT NULL DEFAULT 0,
	created_at      INTEGER,
	updated_at      INTEGER
);

CREATE TABLE schedule_runs (
	id            INTEGER PRIMARY KEY,
	schedule_id   INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
	slot          INTEGER NOT NULL,
	started_at    INTEGER,
	ended_at      INTEGER,
	status        TEXT NOT NULL DEFAULT '',
	missed        INTEGER NOT NULL DEFAULT 0,
	session_id    TEXT NOT NULL DEFAULT '',
	thread_key    TEXT NOT NULL DEFAULT '',
	result        TEXT NOT NULL DEFAULT '',
	error         TEXT NOT NULL DEFAULT '',
	cost_usd      REAL NOT NULL DEFAULT 0,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	num_turns     INTEGER NOT NULL DEFAULT 0,
	UNIQUE (schedule_id, slot)
);
`),
	// A chat account's login (the Matrix device the crypto state belongs
	// to) and its sync position: a restart resumes where it left off.
	sqlMigration("chat accounts and sync cursors", `
CREATE TABLE chat_accounts (
	platform     TEXT NOT NULL,
	account      TEXT NOT NULL,
	server       TEXT NOT NULL DEFAULT '',
	device_id    TEXT NOT NULL DEFAULT '',
	access_token TEXT NOT NULL DEFAULT '',
	pickle_key   TEXT NOT NULL DEFAULT '',
	recovery_key TEXT NOT NULL DEFAULT '',
	updated_at   INTEGER,
	PRIMARY KEY (platform, account)
);

CREATE TABLE sync_cursors (
	platform   TEXT NOT NULL,
	account    TEXT NOT NULL,
	next_batch TEXT NOT NULL DEFAULT '',
	filter_id  TEXT NOT NULL DEFAULT '',
	updated_at INTEGER,
	PRIMARY KEY (platform, account)
);
`),
	// The processes of live sessions, so that the next start can end what
	// a bot that died left running (a row per process the bot started,
	// deleted when it ends); and turns a restart cut off, owing their
	// thread a notice until it is posted.
	sqlMigration("session processes and interrupted turns", `
CREATE TABLE session_processes (
	id           INTEGER PRIMARY KEY,
	thread_key   TEXT NOT NULL DEFAULT '',
	name         TEXT NOT NULL DEFAULT '',
	pgid         INTEGER NOT NULL,
	pid          INTEGER NOT NULL,
	start_ticks  INTEGER NOT NULL,
	keeper_pid   INTEGER NOT NULL DEFAULT 0,
	keeper_ticks INTEGER NOT NULL DEFAULT 0,
	boot_id      TEXT NOT NULL DEFAULT '',
	started_at   INTEGER
);

ALTER TABLE turns ADD COLUMN notice_owed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX turns_notice_owed ON turns (thread_key) WHERE notice_owed = 1;
CREATE INDEX turns_running ON turns (id) WHERE ended_at IS NULL;
`),
	// Messages taken in but not yet taken up: a restart in between would
	// lose them unsaid (the dedupe keeps Slack from delivering them
	// again). Rows from before have been dealt with.
	sqlMigration("unsettled messages", `
ALTER TABLE received_messages ADD COLUMN settled INTEGER NOT NULL DEFAULT 1;
CREATE INDEX received_messages_unsettled ON received_messages (thread_key) WHERE settled = 0;
`),
	// Repository workspaces: a channel bound to a repository, each thread's
	// worktree and branch, schedules that push, and the branch and commit
	// a run left.
	sqlMigration("workspaces", `
ALTER TABLE channels ADD COLUMN repo TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN repo TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN worktree TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN branch TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN base_commit TEXT NOT NULL DEFAULT '';
CREATE INDEX threads_worktree ON threads (last_activity) WHERE worktree != '';
ALTER TABLE schedules ADD COLUMN push INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schedule_runs ADD COLUMN branch TEXT NOT NULL DEFAULT '';
ALTER TABLE schedule_runs ADD COLUMN commit_id TEXT NOT NULL DEFAULT '';
`),
	// The operator's MCP servers an admin gave a channel (`mcp add`),
	// beside those the servers file gives it.
	sqlMigration("channel mcp servers", `
CREATE TABLE channel_mcp_servers (
	channel_key TEXT NOT NULL,
	name        TEXT NOT NULL,
	added_by    TEXT NOT NULL DEFAULT '',
	added_at    INTEGER,
	PRIMARY KEY (channel_key, name)
);
`),
	// Where a request's tool line is, beside its prompt: a restart shows
	// both final (issue 27).
	sqlMigration("approval tool lines", `
ALTER TABLE approvals ADD COLUMN tool_ref TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN tool_depth INTEGER NOT NULL DEFAULT 0;
`),
	// Tool lines shown running: what a restart finds here was left
	// running by a run that died, and is shown stopped (issue 27).
	sqlMigration("running tool lines", `
CREATE TABLE tool_lines (
	ref        TEXT PRIMARY KEY,
	thread_key TEXT NOT NULL,
	tool       TEXT NOT NULL,
	input      TEXT NOT NULL DEFAULT '',
	depth      INTEGER NOT NULL DEFAULT 0
);
`),
	// Settings set in chat, by scope (issue 29); the settings file's are
	// never stored.
	sqlMigration("scope settings", `
CREATE TABLE scope_settings (
	level     INTEGER NOT NULL,
	scope_key TEXT NOT NULL,
	name      TEXT NOT NULL,
	value     TEXT NOT NULL,
	set_by    TEXT NOT NULL DEFAULT '',
	set_at    INTEGER,
	PRIMARY KEY (level, scope_key, name)
);
`),
	// A channel's facts (`remember`): text given to every session of the
	// channel in its system prompt (issue 29).
	sqlMigration("channel facts", `
CREATE TABLE facts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	channel_key TEXT NOT NULL,
	text        TEXT NOT NULL,
	added_by    TEXT NOT NULL DEFAULT '',
	added_name  TEXT NOT NULL DEFAULT '',
	added_at    INTEGER
);
CREATE INDEX facts_channel ON facts (channel_key, id);
`),
	// A channel's repository bound with `repo` becomes its repo setting
	// given in chat at the channel's scope (level 3, package settings'
	// LevelChannel), so that `settings` and `repo` tell one story; the
	// column is no longer read (issue 29).
	sqlMigration("channel repos become settings", `
INSERT OR IGNORE INTO scope_settings (level, scope_key, name, value, set_by, set_at)
	SELECT 3, key, 'repo', repo, updated_by, updated_at FROM channels WHERE repo != '';
UPDATE channels SET repo = '' WHERE repo != '';
`),
	// Triggers (issue 30): the delivery ids seen (a replay is a
	// duplicate), what each trigger's requests came to (a counter per
	// outcome, bounded whatever is sent), and its runs.
	sqlMigration("triggers", `
CREATE TABLE trigger_deliveries (
	trigger  TEXT NOT NULL,
	delivery TEXT NOT NULL,
	at       INTEGER,
	PRIMARY KEY (trigger, delivery)
);
CREATE TABLE trigger_counts (
	trigger TEXT NOT NULL,
	outcome TEXT NOT NULL,
	n       INTEGER NOT NULL DEFAULT 0,
	last_at INTEGER,
	PRIMARY KEY (trigger, outcome)
);
CREATE TABLE trigger_runs (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	trigger    TEXT NOT NULL,
	delivery   TEXT NOT NULL DEFAULT '',
	event      TEXT NOT NULL DEFAULT '',
	started_at INTEGER,
	ended_at   INTEGER,
	status     TEXT NOT NULL DEFAULT 'running',
	thread_key TEXT NOT NULL DEFAULT '',
	cost_usd   REAL NOT NULL DEFAULT 0,
	error      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX trigger_runs_trigger ON trigger_runs (trigger, started_at);
`),
	// Pull requests (issue 30): the ones the bot opened, each with the
	// thread that made it (a review on it comes back there) and the
	// schedule whose runs it gathers; a schedule's --pr; a run's pull
	// request.
	sqlMigration("pull requests", `
CREATE TABLE pull_requests (
	url         TEXT PRIMARY KEY,
	repo        TEXT NOT NULL,
	forge_repo  TEXT NOT NULL,
	number      INTEGER NOT NULL,
	head        TEXT NOT NULL,
	base        TEXT NOT NULL DEFAULT '',
	thread_key  TEXT NOT NULL DEFAULT '',
	schedule_id INTEGER NOT NULL DEFAULT 0,
	state       TEXT NOT NULL DEFAULT 'open',
	opened_by   TEXT NOT NULL DEFAULT '',
	opened_at   INTEGER,
	updated_at  INTEGER
);
CREATE INDEX pull_requests_thread ON pull_requests (thread_key);
CREATE INDEX pull_requests_schedule ON pull_requests (schedule_id, updated_at);
ALTER TABLE schedules ADD COLUMN pr INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schedule_runs ADD COLUMN pr_url TEXT NOT NULL DEFAULT '';
`),
}
