package postgres

// migrationUnsettled indexes the decisions closed and not yet delivered,
// by bridge: the rows a bridge's heartbeat reads (Unsettled: the answers
// other processes claimed that it has not handed over) and the lost-owner
// sweep takes (LoseOwners: its claimed-and-undelivered half). Without it
// both read every decision the bridge, or every bridge, ever closed: the
// sweep ran at every heartbeat of every process over the whole table as
// soon as one bridge in the registry had stopped heartbeating, which every
// bridge that ever exited has. A delivered or still open decision is not
// in it, so it holds about the answers in flight.
const migrationUnsettled = `CREATE INDEX decisions_unsettled ON decisions (bridge_id) WHERE status <> 'open' AND delivered_at IS NULL`

// unsettledQuery is Unsettled's read; its condition is the index's. It
// and loseOwnersQuery run as unnamed statements (queryPlanned): as named
// ones, the sweep kept a plan made on a small table that scanned it whole
// once it grew (TestHeartbeatReadsArePlannedAtEachRun).
const unsettledQuery = `SELECT id FROM decisions WHERE bridge_id = $1 AND status <> 'open' AND delivered_at IS NULL`

// loseOwnersQuery is LoseOwners' sweep: $1 the reason, $2 the time it
// closes them at, $3 the cutoff (nanoseconds). It takes the decisions of
// every bridge that has no heartbeat since the cutoff: one whose row says
// so, and one whose row is gone (retention deleted it while a bridge
// suspended that long had no decision, and the bridge inserted one before
// its next heartbeat registered it again), the latter only once the
// decision itself is older than the cutoff (a bridge inserts its first
// decisions while it registers). The claimed half names the condition of
// decisions_unsettled word for word (status <> 'open'), so that the
// planner reads both halves from their partial indexes (decisions_open and
// decisions_unsettled) however large the table, and looks each one's
// bridge up by its key.
const loseOwnersQuery = `UPDATE decisions d SET status = 'cancelled', reason = $1, closed_at = $2,
		answer_option = NULL, answer_text = NULL, answer_scope = ''
	WHERE d.bridge_id <> '' AND (d.status = 'open'
		OR (d.status <> 'open' AND d.delivered_at IS NULL AND d.status = 'answered' AND d.closed_at < $3))
		AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.id = d.bridge_id AND b.heartbeat >= $3)
		AND (d.created_at < $3 OR EXISTS (SELECT 1 FROM bridges b WHERE b.id = d.bridge_id))
	RETURNING d.id`
