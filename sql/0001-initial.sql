-- thermlog schema 1. Times are s since epoch, UTC. A value is kept as the integer
-- q = llround(value / resolution) of its channel, so statistics are exact at that resolution.

-- One row per boot_id seen (/proc/sys/kernel/random/boot_id), referenced by cycles.
CREATE TABLE boots (
  id INTEGER PRIMARY KEY,
  boot_id TEXT NOT NULL UNIQUE
) STRICT;

-- One row per stored sampling cycle, kept for coverage and gap counting after the raw
-- values are pruned (about 12 bytes a cycle). clock: 0 unknown, 1 synced, 2 unsynced.
CREATE TABLE cycles (
  ts INTEGER PRIMARY KEY,
  boot INTEGER REFERENCES boots (id),
  clock INTEGER NOT NULL CHECK (clock IN (0, 1, 2))
) STRICT;

-- Every channel ever seen; a vanished channel keeps its row and history with present = 0.
-- resolution is fixed at first sight: it gives the stored integers their meaning.
CREATE TABLE channels (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  source TEXT NOT NULL,
  label TEXT NOT NULL,
  kind TEXT NOT NULL,
  unit TEXT NOT NULL,
  resolution REAL NOT NULL CHECK (resolution > 0),
  path TEXT,
  meta TEXT,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  present INTEGER NOT NULL DEFAULT 1 CHECK (present IN (0, 1))
) STRICT;

-- The raw values of one cycle, keyed by the cycle's ts and so appended at the right edge of
-- the b-tree: a cycle dirties one leaf page. data packs the readings in ascending channel id
-- as varint pairs (channel id minus the previous one, zigzag q); a missing reading has no
-- pair. Later writers also use runs of consecutive ids and a delta form against the row
-- before in the same UTC hour (include/codec.h; every form reads). One row per cycle instead
-- of one per value: under 4 bytes a value instead of 17 (see bench/store-wear.c). clock
-- repeats cycles.clock, so a reader tells unsynced cycles without a join.
CREATE TABLE samples (
  ts INTEGER PRIMARY KEY,
  clock INTEGER NOT NULL CHECK (clock IN (0, 1, 2)),
  data BLOB NOT NULL
) STRICT;

-- Hourly summaries of the synced and unknown-clock values of one channel, kept forever.
-- hist is the exact distribution: varint pairs (q minus the previous bin's q, count) in
-- ascending q, the first q zigzag encoded, so percentiles over whole hours stay exact.
-- unsynced counts the values of unsynced cycles left out. min/max/max_ts are NULL when
-- count is 0. Keyed by hour first: an hour's rollups append to one leaf page instead of
-- dirtying one page per channel (25 pages an hour with 25 channels).
CREATE TABLE rollups (
  hour INTEGER NOT NULL,
  channel_id INTEGER NOT NULL REFERENCES channels (id),
  count INTEGER NOT NULL,
  sum INTEGER NOT NULL,
  min INTEGER,
  max INTEGER,
  max_ts INTEGER,
  unsynced INTEGER NOT NULL,
  hist BLOB NOT NULL,
  PRIMARY KEY (hour, channel_id)
) STRICT, WITHOUT ROWID;

-- Small persistent state: rollup and pruning horizons, running lifetime damage, ...
CREATE TABLE state (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
