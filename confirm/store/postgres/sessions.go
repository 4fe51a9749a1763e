package postgres

// migrationSessions lets the session list read an index instead of every
// decision row: GET /v1/sessions (which the inbox's page asks every
// second) listed the (bridge, session) pairs with a GROUP BY over the whole
// table, each row with its request and snapshot, so its cost grew with
// the retained history (about 150 ms for 150,000 decisions). Its columns
// are everything that list reads, so it is an index-only scan (about 35
// ms for 150,000); decisions_by_bridge, whose (bridge_id, status) no read
// needs any more (the lost-owner sweep reads decisions_open and
// decisions_unsettled), goes, so that a decision's writes update as many
// indexes as before. The build comes first: it lets reads of decisions
// go on (writers wait); the drop, whose lock stops reads too, is then
// only the end of the migration's transaction.
const migrationSessions = `CREATE INDEX decisions_by_bridge_session ON decisions (bridge_id, session_id, created_at, status);
	DROP INDEX IF EXISTS decisions_by_bridge`

// sessionsQuery is SessionsOf's whole list: one row per (bridge, session)
// pair, in the index's order.
const sessionsQuery = `SELECT bridge_id, session_id, COUNT(*) FILTER (WHERE status = 'open'), COUNT(*), MAX(created_at)
	FROM decisions GROUP BY bridge_id, session_id ORDER BY bridge_id, session_id`

// sessionQuery is SessionsOf of session $1 only: its rows through
// decisions_by_session, so that a route naming a session (every answer)
// costs that session's decisions, not the store's.
const sessionQuery = `SELECT bridge_id, session_id, COUNT(*) FILTER (WHERE status = 'open'), COUNT(*), MAX(created_at)
	FROM decisions WHERE session_id = $1 GROUP BY bridge_id, session_id ORDER BY bridge_id`
