package sqlite

// migrationUnsettled indexes the decisions closed and not yet delivered,
// by bridge: the rows a bridge's heartbeat reads (Unsettled) and the
// lost-owner sweep takes (LoseOwners: its claimed-and-undelivered half).
// Without it both read every decision the bridge, or every bridge, ever
// closed, at every heartbeat of every process sharing the file.
const migrationUnsettled = `CREATE INDEX decisions_unsettled ON decisions (bridge_id) WHERE status <> 'open' AND delivered_at IS NULL`

// unsettledQuery is Unsettled's read; its condition is the index's.
const unsettledQuery = `SELECT id FROM decisions WHERE bridge_id = ? AND status <> 'open' AND delivered_at IS NULL`

// loseOwnersQuery selects what LoseOwners closes, ?1 the cutoff
// (nanoseconds): a bridge's open decisions and its claimed, undelivered
// ones, for each bridge whose heartbeat is older; and the same of a bridge
// whose row is gone (retention deleted it while a bridge suspended that
// long had no decision, and the bridge inserted one before its next
// heartbeat registered it again), once the decision itself is older than
// the cutoff (a bridge inserts its first decisions while it registers).
// Each half is its own SELECT, the gone bridges first (CROSS JOIN keeps
// that order), and the claimed half names the condition of
// decisions_unsettled word for word, with its status and closed_at terms
// written +status and +closed_at, which SQLite never looks up in an index:
// so that SQLite, with or without ANALYZE's statistics, reads the open
// ones from decisions_open or decisions_by_bridge and the claimed ones from
// decisions_unsettled, instead of every closed decision (decisions_closed),
// every answered decision of each gone bridge (decisions_by_bridge) or the
// whole table, at every heartbeat of every process. The halves of the
// bridges without a row read the same partial indexes whole (the open and
// the undelivered decisions) and look each bridge up by its key.
const loseOwnersQuery = `SELECT d.id FROM bridges b CROSS JOIN decisions d
		WHERE d.bridge_id = b.id AND b.heartbeat < ?1 AND b.id <> '' AND d.status = 'open'
	UNION ALL
	SELECT d.id FROM bridges b CROSS JOIN decisions d
		WHERE d.bridge_id = b.id AND b.heartbeat < ?1 AND b.id <> '' AND d.status <> 'open' AND d.delivered_at IS NULL
			AND +d.status = 'answered' AND +d.closed_at < ?1
	UNION ALL
	SELECT d.id FROM decisions d INDEXED BY decisions_open
		WHERE d.status = 'open' AND d.bridge_id <> '' AND +d.created_at < ?1
			AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.id = d.bridge_id)
	UNION ALL
	SELECT d.id FROM decisions d INDEXED BY decisions_unsettled
		WHERE d.status <> 'open' AND d.delivered_at IS NULL AND +d.status = 'answered' AND +d.closed_at < ?1
			AND d.bridge_id <> '' AND +d.created_at < ?1
			AND NOT EXISTS (SELECT 1 FROM bridges b WHERE b.id = d.bridge_id)`
