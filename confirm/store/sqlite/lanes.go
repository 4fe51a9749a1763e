package sqlite

// migrationLanes gives the chained tables chain_lane and the placeholders
// lane, as on PostgreSQL, where each store instance chains its journal
// and audit rows on a lane of its own (docs/security.md, "Tamper-evident
// audit"). SQLite serialises its writes anyway and keeps one chain: every
// row it writes is in lane 0, the main chain, and `acpmux audit verify`
// reports a row moved to any other lane (no lane is registered here).
const migrationLanes = `ALTER TABLE decision_events ADD COLUMN chain_lane INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE plan_items ADD COLUMN chain_lane INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE mode_events ADD COLUMN chain_lane INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE votes ADD COLUMN chain_lane INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE prune_events ADD COLUMN chain_lane INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE chain_pruned ADD COLUMN lane INTEGER NOT NULL DEFAULT 0;`
