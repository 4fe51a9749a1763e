package sqlite

// migrationFeedBridge records which bridge wrote each feed event
// ([store.FeedEvent].BridgeID): the bridges sharing a store share its
// feed, and their agents' session ids may collide. Existing events get ”.
const migrationFeedBridge = `ALTER TABLE feed_events ADD COLUMN bridge_id TEXT NOT NULL DEFAULT ''`
