-- thermlog schema 11: the history compacted into chunks. Cycles are written as before, one row a
-- cycle in samples (the head); once a block of time closes (4 hours of cycles, 15 minutes of a
-- run's fast samples, UTC-aligned), one transaction writes its map and one chunk per channel and
-- deletes its head rows. A block is either compacted or in the head, never both. The byte formats
-- are src/base/blockcodec.h's; every blob starts with its codec id.

-- The daemon that stored a head row's cycle (boots.id), NULL for an imported one. Rows of a
-- database converted from an earlier schema have their cycle in the table cycles until the
-- conversion moves them (store-convert.c).
ALTER TABLE samples ADD COLUMN boot INTEGER;

-- A compacted block's map: the times of its cycles (series 0: s since epoch, the one-minute
-- cycles; series 1: ms, the fast samples of runs), their clock states and boots. block is the
-- block's start in s. A map larger than a page's cell is split into parts, each covering
-- cycles [first, first + cycles) of the block in the blob's header, counted here for the
-- summaries (store_info): cycles, the unsynced among them, the first and the last time.
CREATE TABLE IF NOT EXISTS blocks (
  series INTEGER NOT NULL CHECK (series BETWEEN 0 AND 1),
  block INTEGER NOT NULL,
  part INTEGER NOT NULL,
  cycles INTEGER NOT NULL,
  unsynced INTEGER NOT NULL,
  first INTEGER NOT NULL,
  last INTEGER NOT NULL,
  map BLOB NOT NULL,
  PRIMARY KEY (series, block, part)
) STRICT, WITHOUT ROWID;

-- One channel's values in a compacted block: which of the block's cycles hold a value and the
-- values (integers of the channel's resolution). A chunk that would not fit in its page's cell
-- (SQLite's overflow rule) is split into parts over consecutive cycles.
CREATE TABLE IF NOT EXISTS chunks (
  series INTEGER NOT NULL CHECK (series BETWEEN 0 AND 1),
  block INTEGER NOT NULL,
  channel_id INTEGER NOT NULL,
  part INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (series, block, channel_id, part)
) STRICT, WITHOUT ROWID;

-- A database written by an older thermlog (one that has rolled up hours) is converted: its head
-- keeps its cycles in the table cycles until every closed block is compacted, then the values
-- are checked, day by day, against the hourly rollups and daily rows the old thermlog wrote:
-- where those end is kept here (store-convert.c). A new database has none and is switched at
-- once: the table cycles goes.
INSERT OR REPLACE INTO state (key, value)
  SELECT 'store.convert_to', value FROM state WHERE key = 'store.rollup_horizon';
INSERT OR REPLACE INTO state (key, value)
  SELECT 'store.convert_days', value FROM state WHERE key = 'store.day_horizon';
