-- thermlog schema 9: a channel's history refined to a finer resolution in batches. When a live
-- reading is finer than the stored resolution, the writer rescales the channel's rows from the
-- current UTC day on at once and leaves the rest to batches off the cycle: until one is done,
-- the channel's raw rows before `before` (s since epoch, UTC, a whole hour), its hourly
-- rollups of hours before it and its daily rows of days before the day that ends after it
-- still hold integers `factor` times coarser than channels.resolution, and every read scales
-- them. One row per channel being rescaled; none once every row is.
CREATE TABLE IF NOT EXISTS rescales (
  channel_id INTEGER PRIMARY KEY REFERENCES channels (id),
  factor INTEGER NOT NULL CHECK (factor > 1),
  before INTEGER NOT NULL
) STRICT;
