package postgres

import (
	"context"
)

// migrationWatchChannels records on each decision the store instance that
// won its claim (decisions.claimer, that instance's owner tag; "" while
// open or for a decision closed without a claim). The owner's delivery or
// refusal of the answer NOTIFYs nobody: the claimer reads it
// ([Store.Settled]).
const migrationWatchChannels = `ALTER TABLE decisions ADD COLUMN claimer TEXT NOT NULL DEFAULT '';`

// channelOf returns the SQL expression of the LISTEN/NOTIFY channel of the
// store instance whose owner tag is the SQL expression tag: "acpmux_" and
// the first 24 hex digits of the tag's SHA-256 (an identifier within
// PostgreSQL's 63 bytes). Each instance listens on its own channel only,
// so that a change wakes the one process it concerns (the decision's
// owner), not every bridge of the store.
func channelOf(tag string) string {
	return `'acpmux_' || left(encode(sha256(convert_to(` + tag + `, 'UTF8')), 'hex'), 24)`
}

// notifyOwner NOTIFYs the owner of decision id, unless the owner is this
// instance, with payload (delivered when the transaction commits).
func (s *Store) notifyOwner(ctx context.Context, q querier, id, payload string) error {
	_, err := q.Exec(ctx, `SELECT pg_notify(`+channelOf("owner")+`, $3) FROM decisions WHERE id = $1 AND owner <> $2`,
		id, s.owner, payload)
	return err
}

// listenChannel returns this instance's channel name.
func (s *Store) listenChannel(ctx context.Context, q querier) (string, error) {
	var ch string
	err := q.QueryRow(ctx, `SELECT `+channelOf(`$1::text`), s.owner).Scan(&ch)
	return ch, err
}
