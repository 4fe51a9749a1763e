package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrations are applied in order; migration i brings the schema to
// version i+1 (table schema_version). Never edit a released one: append a
// new one. Times are nanoseconds since 1970 UTC (BIGINT), as in the SQLite
// store, since timestamptz keeps only microseconds; the agent's request is
// BYTEA and snapshots and rows are TEXT (not JSONB), so they come back as
// they were given.
var migrations = []string{
	`CREATE TABLE decisions (
		id             TEXT PRIMARY KEY,
		session_id     TEXT NOT NULL,
		agent_key      TEXT NOT NULL,
		owner          TEXT NOT NULL,
		status         TEXT NOT NULL CHECK (status IN ('open','answered','timed_out','cancelled')),
		request        BYTEA NOT NULL,
		snapshot       TEXT NOT NULL,
		created_at     BIGINT NOT NULL,
		deadline       BIGINT NOT NULL,
		answer_option  TEXT,
		answer_text    TEXT,
		resolved_by    TEXT NOT NULL DEFAULT '',
		reason         TEXT NOT NULL DEFAULT '',
		closed_at      BIGINT,
		delivered_at   BIGINT
	);
	CREATE INDEX decisions_by_session ON decisions (session_id, created_at);
	CREATE INDEX decisions_open ON decisions (status) WHERE status = 'open';
	CREATE TABLE decision_events (
		decision_id TEXT NOT NULL REFERENCES decisions (id),
		seq         INTEGER NOT NULL,
		at          BIGINT NOT NULL,
		type        TEXT NOT NULL,
		host        TEXT NOT NULL DEFAULT '',
		detail      TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (decision_id, seq)
	);`,
	`CREATE TABLE plan_items (
		id          TEXT PRIMARY KEY,
		session_id  TEXT NOT NULL,
		decided_at  BIGINT NOT NULL,
		item        TEXT NOT NULL,
		n           BIGSERIAL NOT NULL
	);
	CREATE INDEX plan_items_by_session ON plan_items (session_id, decided_at);
	CREATE FUNCTION plan_items_immutable() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'plan items are immutable'; END $$;
	CREATE TRIGGER plan_items_no_change BEFORE UPDATE OR DELETE ON plan_items
		FOR EACH ROW EXECUTE FUNCTION plan_items_immutable();
	CREATE TABLE always_rules (
		key         TEXT PRIMARY KEY,
		decision    TEXT NOT NULL CHECK (decision IN ('allow','deny')),
		created_at  BIGINT NOT NULL,
		rule        TEXT NOT NULL
	);
	CREATE TABLE mode_events (
		session_id  TEXT NOT NULL,
		at          BIGINT NOT NULL,
		mode        TEXT NOT NULL,
		revision    BIGINT NOT NULL,
		"by"        TEXT NOT NULL
	);`,
	`CREATE TABLE bridges (
		id          TEXT PRIMARY KEY,
		name        TEXT NOT NULL,
		host        TEXT NOT NULL,
		agent       TEXT NOT NULL,
		cwd         TEXT NOT NULL,
		pid         BIGINT NOT NULL,
		started     BIGINT NOT NULL,
		heartbeat   BIGINT NOT NULL
	);`,
	migrationPeople,        // people.go
	migrationChain,         // chain.go
	migrationFeed,          // feed.go
	migrationPrunedChain,   // pruned.go
	migrationShared,        // shared.go
	migrationPruneEvents,   // pruneevents.go
	migrationNotes,         // notes.go
	migrationWatchChannels, // watchchannels.go
	migrationFeedAt,        // feedindex.go
	migrationChainAppend,   // chainappend.go
	migrationLanes,         // lanes.go
	migrationRuleKeys,      // rulekeys.go
	migrationFeedBridge,    // feedbridge.go
	migrationAnswerScope,   // answerscope.go
	migrationUnsettled,     // unsettled.go
	migrationSessions,      // sessions.go
	migrationStopped,       // stopped.go
}

// migrationLock is the key of the transaction-level advisory lock that
// serialises the migrations of bridges starting at once on one database.
const migrationLock int64 = 0x6163706d75780001 // "acpmux" 1

// migrate brings the schema to len(migrations) in one transaction, holding
// the advisory lock, and returns the version it found.
func migrate(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}) (int, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return 0, fmt.Errorf("lock schema: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return 0, fmt.Errorf("create schema_version: %w", err)
	}
	var v int
	err = tx.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		_, err = tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`)
	}
	if err != nil {
		return 0, fmt.Errorf("read schema_version: %w", err)
	}
	if v > len(migrations) {
		return v, fmt.Errorf("%w: the database has schema version %d, this acpmux knows up to %d (upgrade acpmux)",
			store.ErrSchemaTooNew, v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return v, fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE schema_version SET version = $1`, len(migrations)); err != nil {
		return v, fmt.Errorf("write schema_version: %w", err)
	}
	return v, tx.Commit(ctx)
}
