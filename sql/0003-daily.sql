-- thermlog schema 3: a daily level over the hourly rollups, so a query over years reads one row
-- per day instead of 24 rollups per channel and one row per cycle. Derived data: rebuilt by
-- store_maintain() from the hourly rollups and the cycles; queries use the days before the
-- "store.day_horizon" state only, and an import or a refinement moves that horizon back.

-- The trusted cycles (synced and unknown clock) of one UTC day: first and last ts (NULL when
-- none) and the exact distribution of the spacings between consecutive trusted cycles inside
-- the day, encoded as rollups.hist. unsynced counts the unsynced cycles. One row per day.
CREATE TABLE IF NOT EXISTS cycle_days (
  day INTEGER PRIMARY KEY,
  cycles INTEGER NOT NULL,
  unsynced INTEGER NOT NULL,
  first_ts INTEGER,
  last_ts INTEGER,
  spacing BLOB NOT NULL
) STRICT;

-- The hourly rollups of one channel merged over a UTC day: same columns and encoding.
CREATE TABLE IF NOT EXISTS rollup_days (
  day INTEGER NOT NULL,
  channel_id INTEGER NOT NULL REFERENCES channels (id),
  count INTEGER NOT NULL,
  sum INTEGER NOT NULL,
  min INTEGER,
  max INTEGER,
  max_ts INTEGER,
  unsynced INTEGER NOT NULL,
  hist BLOB NOT NULL,
  PRIMARY KEY (day, channel_id)
) STRICT, WITHOUT ROWID;
