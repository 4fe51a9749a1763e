package sqlite

// migrationFeedAt indexes feed_events by (decision_id, at) instead of
// decision_id alone. Prune (pruneFeed) deletes the session events (an
// empty decision_id) older than its cutoff, at every start of acpmux run
// and hourly: with decision_id alone that read every session event of the
// feed from the table, however recent (with 200,000 of them, acpmux run
// started with 3.7 MB more memory and 40 ms more CPU); now it reads the
// index range before the cutoff only. The pair serves the lookups by
// decision_id as before.
const migrationFeedAt = `CREATE INDEX feed_events_by_decision_at ON feed_events (decision_id, at);
	DROP INDEX feed_events_by_decision;`
