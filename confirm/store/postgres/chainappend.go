package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationChainAppend adds chain_append, which appends the chained rows
// of one transaction to the hash chain (docs/security.md) in one
// statement, with one lock and one update of the chain head for all of
// them instead of one each. Row i is p_kind[i]: 'event' (a
// decision_events row: decision_id p_a[i], seq p_seq[i], at p_at[i], type
// p_b[i], host p_c[i], detail p_d[i], person p_e[i]), 'new_event' (the
// same, inserted only when the decision row p_a[i] is this transaction's
// version: queueNewEvent) or 'plan_item' (a plan_items row: id p_a[i],
// session_id p_b[i], decided_at p_at[i], item p_d[i]); p_content[i] is its
// store.ChainContent. Each row's hash is the hex SHA-256 of the previous
// hash, a newline and its content, as store.ChainHash computes and as
// chainedQuery does for a single row; a row whose insert is skipped (ON
// CONFLICT, or the guard of 'new_event') takes no chain position. It
// returns how many rows it inserted.
const migrationChainAppend = `CREATE FUNCTION chain_append(p_kind TEXT[], p_a TEXT[], p_seq INTEGER[], p_at BIGINT[],
		p_b TEXT[], p_c TEXT[], p_d TEXT[], p_e TEXT[], p_content BYTEA[]) RETURNS INTEGER LANGUAGE plpgsql AS $$
	DECLARE
		head_seq  BIGINT;
		head_hash TEXT;
		h         TEXT;
		inserted  INTEGER := 0;
	BEGIN
		SELECT chain_head.seq, chain_head.hash INTO head_seq, head_hash FROM chain_head WHERE id = 1 FOR UPDATE;
		FOR i IN 1 .. COALESCE(array_length(p_kind, 1), 0) LOOP
			h := encode(sha256(convert_to(head_hash || E'\n', 'UTF8') || p_content[i]), 'hex');
			IF p_kind[i] = 'event' THEN
				INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person, chain_seq, chain_prev, chain_hash)
					VALUES (p_a[i], p_seq[i], p_at[i], p_b[i], p_c[i], p_d[i], p_e[i], head_seq + 1, head_hash, h) ON CONFLICT DO NOTHING;
			ELSIF p_kind[i] = 'new_event' THEN
				INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person, chain_seq, chain_prev, chain_hash)
					SELECT p_a[i], p_seq[i], p_at[i], p_b[i], p_c[i], p_d[i], p_e[i], head_seq + 1, head_hash, h
					FROM decisions WHERE id = p_a[i] AND xmin = pg_current_xact_id()::xid ON CONFLICT DO NOTHING;
			ELSIF p_kind[i] = 'plan_item' THEN
				INSERT INTO plan_items (id, session_id, decided_at, item, chain_seq, chain_prev, chain_hash)
					VALUES (p_a[i], p_b[i], p_at[i], p_d[i], head_seq + 1, head_hash, h) ON CONFLICT (id) DO NOTHING;
			ELSE
				RAISE EXCEPTION 'chain_append: unknown kind %', p_kind[i];
			END IF;
			IF FOUND THEN
				head_seq := head_seq + 1;
				head_hash := h;
				inserted := inserted + 1;
			END IF;
		END LOOP;
		IF inserted > 0 THEN
			UPDATE chain_head SET seq = head_seq, hash = head_hash WHERE id = 1;
		END IF;
		RETURN inserted;
	END $$;`

// chainRows are the chained rows of one write (or of a group of writes
// sharing a transaction, group.go), in chain order, as the arrays of one
// chain_append call.
type chainRows struct {
	kinds, a   []string
	seq        []int32
	at         []int64
	b, c, d, e []string
	content    [][]byte
}

// event adds the journal event ev of decision id; kind is "event" or
// "new_event" (inserted only after a write of the row in this
// transaction: queueNewEvent).
func (r *chainRows) event(kind, id string, ev store.Event) {
	content := store.ChainContent(store.ChainDecisionEvents, id, int64(ev.Seq), nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person)
	r.add(kind, id, int32(ev.Seq), nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person, content)
}

// planItem adds the audit row it.
func (r *chainRows) planItem(it store.PlanItem) {
	r.add("plan_item", it.ID, 0, nanos(it.DecidedAt), it.SessionID, "", string(it.Item), "", planItemContent(it)) // gate.go
}

func (r *chainRows) add(kind, a string, seq int32, at int64, b, c, d, e string, content []byte) {
	r.kinds, r.a, r.seq, r.at = append(r.kinds, kind), append(r.a, a), append(r.seq, seq), append(r.at, at)
	r.b, r.c, r.d, r.e = append(r.b, b), append(r.c, c), append(r.d, d), append(r.e, e)
	r.content = append(r.content, content)
}

// addAll adds o's rows after r's.
func (r *chainRows) addAll(o *chainRows) {
	r.kinds, r.a, r.seq, r.at = append(r.kinds, o.kinds...), append(r.a, o.a...), append(r.seq, o.seq...), append(r.at, o.at...)
	r.b, r.c, r.d, r.e = append(r.b, o.b...), append(r.c, o.c...), append(r.d, o.d...), append(r.e, o.e...)
	r.content = append(r.content, o.content...)
}

// len returns how many rows r holds.
func (r *chainRows) len() int {
	if r == nil {
		return 0
	}
	return len(r.kinds)
}

// queue queues the chain_append_lane of r's rows on lane (lanes.go) in
// b, when r has any: last, so that the lane's head is taken after every
// row lock of the transaction and held for no round trip.
func (r *chainRows) queue(b *pgx.Batch, lane int64) {
	if r.len() == 0 {
		return
	}
	b.Queue(`SELECT chain_append_lane($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, lane, r.kinds, r.a, r.seq, r.at, r.b, r.c, r.d, r.e, r.content)
}
