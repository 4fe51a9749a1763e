package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationLanes gives each store instance (process) a chain lane of its
// own (docs/security.md, "Tamper-evident audit"), so that the chained
// transactions of many bridges on one database no longer pass one head
// row one at a time. Every chained table gets chain_lane (0 = the main
// chain, chain_head's: every existing row); chain_lanes holds each lane's
// head (its newest position and hash); a lane is registered by a chained
// prune event of kind 'lane' in the main chain, whose id is the lane's
// number and whose hash the lane's first row chains to; a placeholder
// (chain_pruned) is keyed by its lane and position. chain_append_lane is
// chain_append (chainappend.go) on lane p_lane's head, locking and moving
// that head instead of chain_head's (lane 0 is chain_append itself); it
// refuses a lane that has no head. chain_append stays as it was.
const migrationLanes = `ALTER TABLE decision_events ADD COLUMN chain_lane BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE plan_items ADD COLUMN chain_lane BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE mode_events ADD COLUMN chain_lane BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE votes ADD COLUMN chain_lane BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE prune_events ADD COLUMN chain_lane BIGINT NOT NULL DEFAULT 0;
	CREATE TABLE chain_lanes (
		lane BIGINT PRIMARY KEY,
		seq  BIGINT NOT NULL,
		hash TEXT NOT NULL
	);
	ALTER TABLE prune_events DROP CONSTRAINT prune_events_kind_check,
		ADD CONSTRAINT prune_events_kind_check CHECK (kind IN ('anchor','prune','lane'));
	ALTER TABLE chain_pruned ADD COLUMN lane BIGINT NOT NULL DEFAULT 0;
	ALTER TABLE chain_pruned DROP CONSTRAINT chain_pruned_pkey, ADD PRIMARY KEY (lane, seq);
	CREATE FUNCTION chain_append_lane(p_lane BIGINT, p_kind TEXT[], p_a TEXT[], p_seq INTEGER[], p_at BIGINT[],
		p_b TEXT[], p_c TEXT[], p_d TEXT[], p_e TEXT[], p_content BYTEA[]) RETURNS INTEGER LANGUAGE plpgsql AS $$
	DECLARE
		head_seq  BIGINT;
		head_hash TEXT;
		h         TEXT;
		inserted  INTEGER := 0;
	BEGIN
		IF p_lane = 0 THEN
			RETURN chain_append(p_kind, p_a, p_seq, p_at, p_b, p_c, p_d, p_e, p_content);
		END IF;
		SELECT chain_lanes.seq, chain_lanes.hash INTO head_seq, head_hash FROM chain_lanes WHERE lane = p_lane FOR UPDATE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'chain_append_lane: lane % has no head', p_lane;
		END IF;
		FOR i IN 1 .. COALESCE(array_length(p_kind, 1), 0) LOOP
			h := encode(sha256(convert_to(head_hash || E'\n', 'UTF8') || p_content[i]), 'hex');
			IF p_kind[i] = 'event' THEN
				INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person, chain_lane, chain_seq, chain_prev, chain_hash)
					VALUES (p_a[i], p_seq[i], p_at[i], p_b[i], p_c[i], p_d[i], p_e[i], p_lane, head_seq + 1, head_hash, h) ON CONFLICT DO NOTHING;
			ELSIF p_kind[i] = 'new_event' THEN
				INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person, chain_lane, chain_seq, chain_prev, chain_hash)
					SELECT p_a[i], p_seq[i], p_at[i], p_b[i], p_c[i], p_d[i], p_e[i], p_lane, head_seq + 1, head_hash, h
					FROM decisions WHERE id = p_a[i] AND xmin = pg_current_xact_id()::xid ON CONFLICT DO NOTHING;
			ELSIF p_kind[i] = 'plan_item' THEN
				INSERT INTO plan_items (id, session_id, decided_at, item, chain_lane, chain_seq, chain_prev, chain_hash)
					VALUES (p_a[i], p_b[i], p_at[i], p_d[i], p_lane, head_seq + 1, head_hash, h) ON CONFLICT (id) DO NOTHING;
			ELSE
				RAISE EXCEPTION 'chain_append_lane: unknown kind %', p_kind[i];
			END IF;
			IF FOUND THEN
				head_seq := head_seq + 1;
				head_hash := h;
				inserted := inserted + 1;
			END IF;
		END LOOP;
		IF inserted > 0 THEN
			UPDATE chain_lanes SET seq = head_seq, hash = head_hash WHERE lane = p_lane;
		END IF;
		RETURN inserted;
	END $$;`

// laneState is a store instance's chain lane, registered on its first
// chained write (Store.chainLane).
type laneState struct {
	mu sync.Mutex // held while registering, so one instance registers one lane
	id int64      // 0 until registered
}

// chainLane returns this instance's lane, registering it on the first
// call: in one transaction, a prune event of kind lane appended to the
// main chain (which takes the main head, once per instance) and the
// lane's head row at position 0 with that event's hash, so that the
// lane's first row chains to its registration. An error leaves the lane
// unregistered; the chained write that asked fails with it.
func (s *Store) chainLane(ctx context.Context) (int64, error) {
	l := &s.lane
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.id != 0 {
		return l.id, nil
	}
	var id int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if id, err = nextPruneID(ctx, tx); err != nil {
			return err
		}
		now := time.Now().UTC().UnixNano()
		e := store.PruneEvent{Kind: store.PruneKindLane, ID: id, PlaceholdersSHA256: store.PlaceholdersDigest(nil), Legacy: map[string]int64{}}
		if err := insertPruneEvent(ctx, tx, e, now, now); err != nil { // pruneevents.go: the main chain
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO chain_lanes (lane, seq, hash) SELECT id, 0, chain_hash FROM prune_events WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("register chain lane: %w", err)
	}
	l.id = id
	return id, nil
}

// laneHeads reads the head rows of every lane.
func laneHeads(ctx context.Context, q querier) ([]store.LaneHead, error) {
	rows, err := q.Query(ctx, `SELECT lane, seq, hash FROM chain_lanes`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.LaneHead
	for rows.Next() {
		var h store.LaneHead
		if err := rows.Scan(&h.Lane, &h.Seq, &h.Hash); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
