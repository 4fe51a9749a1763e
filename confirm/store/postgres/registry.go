package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
	_, err = s.pool.Exec(ctx, `INSERT INTO bridges (id, name, host, agent, cwd, pid, started, heartbeat)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO UPDATE SET name = excluded.name, host = excluded.host,
		agent = excluded.agent, cwd = excluded.cwd, pid = excluded.pid, started = excluded.started, heartbeat = excluded.heartbeat`,
		b.ID, b.Name, b.Host, string(raw), b.Cwd, int64(b.PID), nanos(b.Started), nanos(b.Heartbeat))
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

// Bridges implements [store.Registry].
func (s *Store) Bridges(ctx context.Context) ([]store.Bridge, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, host, agent, cwd, pid, started, heartbeat FROM bridges ORDER BY started, id`)
	if err != nil {
		return nil, fmt.Errorf("store bridges: %w", err)
	}
	defer rows.Close()
	out := []store.Bridge{}
	for rows.Next() {
		var b store.Bridge
		var argv string
		var pid, started, beat int64
		if err := rows.Scan(&b.ID, &b.Name, &b.Host, &argv, &b.Cwd, &pid, &started, &beat); err != nil {
			return nil, fmt.Errorf("store bridges: %w", err)
		}
		if err := json.Unmarshal([]byte(argv), &b.Agent); err != nil {
			return nil, fmt.Errorf("store bridges: %w", err)
		}
		b.PID, b.Started, b.Heartbeat = int(pid), fromNanos(started), fromNanos(beat)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store bridges: %w", err)
	}
	return out, nil
}

var _ store.Registry = (*Store)(nil)
