package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationBridges is schema version 3: the bridges registry. agent is the
// argv as a JSON array.
const migrationBridges = `CREATE TABLE bridges (
		id          TEXT PRIMARY KEY,
		name        TEXT NOT NULL,
		host        TEXT NOT NULL,
		agent       TEXT NOT NULL,
		cwd         TEXT NOT NULL,
		pid         INTEGER NOT NULL,
		started     INTEGER NOT NULL,
		heartbeat   INTEGER NOT NULL
	);`

// RegisterBridge implements [store.Registry].
func (s *Store) RegisterBridge(ctx context.Context, b store.Bridge) error {
	argv, err := json.Marshal(nonNilArgv(b.Agent))
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.ExecContext(ctx, `INSERT INTO bridges (id, name, host, agent, cwd, pid, started, heartbeat, stopped)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name, host = excluded.host,
		agent = excluded.agent, cwd = excluded.cwd, pid = excluded.pid, started = excluded.started, heartbeat = excluded.heartbeat,
		stopped = excluded.stopped`,
		b.ID, b.Name, b.Host, string(argv), b.Cwd, b.PID, nanos(b.Started), nanos(b.Heartbeat), stoppedNanos(b.Stopped))
	if err != nil {
		return fmt.Errorf("store register bridge: %w", err)
	}
	return nil
}

// Heartbeat implements [store.Registry].
func (s *Store) Heartbeat(ctx context.Context, id string, at time.Time) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, `UPDATE bridges SET heartbeat = MAX(heartbeat, ?) WHERE id = ?`, nanos(at), id)
	if err != nil {
		return fmt.Errorf("store heartbeat: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store heartbeat: %w: bridge %s", store.ErrNotFound, id)
	}
	return nil
}

// StopBridge implements [store.Registry].
func (s *Store) StopBridge(ctx context.Context, id string, at time.Time) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, `UPDATE bridges SET stopped = ?1, heartbeat = MAX(heartbeat, ?1) WHERE id = ?2`, nanos(at), id)
	if err != nil {
		return fmt.Errorf("store stop bridge: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
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
	var ids []string
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT id FROM bridges WHERE stopped = 0 AND heartbeat >= ?`, nanos(since))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store live bridges: %w", err)
	}
	return ids, nil
}

// Bridges implements [store.Registry].
func (s *Store) Bridges(ctx context.Context) ([]store.Bridge, error) {
	out := []store.Bridge{}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT id, name, host, agent, cwd, pid, started, heartbeat, stopped FROM bridges ORDER BY started, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b store.Bridge
			var argv string
			var started, beat, stopped int64
			if err := rows.Scan(&b.ID, &b.Name, &b.Host, &argv, &b.Cwd, &b.PID, &started, &beat, &stopped); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(argv), &b.Agent); err != nil {
				return err
			}
			b.Started, b.Heartbeat, b.Stopped = fromNanos(started), fromNanos(beat), stoppedTime(stopped)
			out = append(out, b)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store bridges: %w", err)
	}
	return out, nil
}

func nonNilArgv(a []string) []string {
	if a == nil {
		return []string{}
	}
	return a
}

var _ store.Registry = (*Store)(nil)
