package postgres

// migrationFeedAt indexes feed_events by (decision_id, at) instead of
// decision_id alone, as the SQLite store does: Prune's session events (an
// empty decision_id, older than the cutoff) are a range of the index, not
// every session event of the feed.
const migrationFeedAt = `CREATE INDEX feed_events_by_decision_at ON feed_events (decision_id, at);
	DROP INDEX feed_events_by_decision;`
