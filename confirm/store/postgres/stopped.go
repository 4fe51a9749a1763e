package postgres

// migrationStopped records a bridge's clean stop (store.Registry
// StopBridge): 0 while it runs or when it died without stopping, else the
// stop's Unix nanoseconds. A stopped bridge is not live at once, where a
// dead one is not live once its lease ran out.
const migrationStopped = `ALTER TABLE bridges ADD COLUMN stopped BIGINT NOT NULL DEFAULT 0`
