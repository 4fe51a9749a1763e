package sqlite

// migrationSessions lets the session list read a covering index instead
// of every decision row: GET /v1/sessions (which the inbox's page asks
// every second) listed the (bridge, session) pairs with a GROUP BY over
// the whole table, each row with its request and snapshot, so its cost
// grew with the retained history. decisions_by_bridge stays: the
// lost-owner sweep reads a gone bridge's open decisions from it.
const migrationSessions = `CREATE INDEX decisions_by_bridge_session ON decisions (bridge_id, session_id, created_at, status)`

// sessionsQuery is SessionsOf's whole list: one row per (bridge, session)
// pair, in the index's order.
const sessionsQuery = `SELECT bridge_id, session_id, SUM(status = 'open'), COUNT(*), MAX(created_at)
	FROM decisions GROUP BY bridge_id, session_id ORDER BY bridge_id, session_id`

// sessionQuery is SessionsOf of session ?1 only: its rows through
// decisions_by_session, so that a route naming a session (every answer)
// costs that session's decisions, not the store's.
const sessionQuery = `SELECT bridge_id, session_id, SUM(status = 'open'), COUNT(*), MAX(created_at)
	FROM decisions WHERE session_id = ?1 GROUP BY bridge_id, session_id ORDER BY bridge_id`
