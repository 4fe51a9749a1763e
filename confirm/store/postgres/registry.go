package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// RegisterBridge implements [store.Registry].
func (s *Store) RegisterBridge(ctx context.Context, b store.Bridge) error {
	argv := b.Agent
	if argv == nil {
		argv = []string{}
	}
	raw, err := json.Marshal(argv)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO bridges (id, name, host, agent, cwd, pid, started, heartbeat, stopped)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO UPDATE SET name = excluded.name, host = excluded.host,
		agent = excluded.agent, cwd = excluded.cwd, pid = excluded.pid, started = excluded.started, heartbeat = excluded.heartbeat,
		stopped = excluded.stopped`,
		b.ID, b.Name, b.Host, string(raw), b.Cwd, int64(b.PID), nanos(b.Started), nanos(b.Heartbeat), stoppedNanos(b.Stopped))
	if err != nil {
		return fmt.Errorf("store register bridge: %w", err)
	}
	return nil
}

// Heartbeat implements [store.Registry].
func (s *Store) Heartbeat(ctx context.Context, id string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE bridges SET heartbeat = GREATEST(heartbeat, $1) WHERE id = $2`, nanos(at), id)
	if err != nil {
		return fmt.Errorf("store heartbeat: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store heartbeat: %w: bridge %s", store.ErrNotFound, id)
	}
	return nil
}

// StopBridge implements [store.Registry].
func (s *Store) StopBridge(ctx context.Context, id string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE bridges SET stopped = $1, heartbeat = GREATEST(heartbeat, $1) WHERE id = $2`, nanos(at), id)
	if err != nil {
		return fmt.Errorf("store stop bridge: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store stop bridge: %w: bridge %s", store.ErrNotFound, id)
	}
	return nil
}

// stoppedNanos is the stopped column of t: 0 for the zero time (running).
func stoppedNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return nanos(t)
}

// stoppedTime is the Stopped of the stopped column n.
func stoppedTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return fromNanos(n)
}

// LiveBridges implements [store.Registry].
func (s *Store) LiveBridges(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM bridges WHERE stopped = 0 AND heartbeat >= $1`, nanos(since))
	if err != nil {
		return nil, fmt.Errorf("store live bridges: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store live bridges: %w", err)
	}
	return ids, nil
}

// Bridges implements [store.Registry].
func (s *Store) Bridges(ctx context.Context) ([]store.Bridge, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, host, agent, cwd, pid, started, heartbeat, stopped FROM bridges ORDER BY started, id`)
	if err != nil {
		return nil, fmt.Errorf("store bridges: %w", err)
	}
	defer rows.Close()
	out := []store.Bridge{}
	for rows.Next() {
		var b store.Bridge
		var argv string
		var pid, started, beat, stopped int64
		if err := rows.Scan(&b.ID, &b.Name, &b.Host, &argv, &b.Cwd, &pid, &started, &beat, &stopped); err != nil {
			return nil, fmt.Errorf("store bridges: %w", err)
		}
		if err := json.Unmarshal([]byte(argv), &b.Agent); err != nil {
			return nil, fmt.Errorf("store bridges: %w", err)
		}
		b.PID, b.Started, b.Heartbeat, b.Stopped = int(pid), fromNanos(started), fromNanos(beat), stoppedTime(stopped)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store bridges: %w", err)
	}
	return out, nil
}

var _ store.Registry = (*Store)(nil)
