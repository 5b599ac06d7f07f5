-- thermlog schema 7: throttle episodes. A domain (a cpufreq policy, a devfreq device, "board")
-- is throttled while its effective maximum is below its hardware maximum; an episode is one
-- throttled interval. Times are s since epoch, UTC (cycle stamps). end_ts is NULL while the
-- episode is open; last_seen is the last cycle that saw it, where an episode left open by a
-- crash is closed when the daemon starts again. duration_ms is end - start for polled
-- episodes and the counted time for those only the cooling devices' time_in_state_ms saw
-- (method 'counters', start and end the two cycles around them). min_hz is the deepest cap
-- (NULL when unknown), max_hz the hardware maximum. zone, trip and the temperatures (m°C)
-- explain a thermal episode; cooling lists the capping cooling devices active during it, one
-- "<N> <deepest state> <type>" line each (cooling_deviceN). Pruned with the raw history.
CREATE TABLE IF NOT EXISTS throttle_episodes (
  id INTEGER PRIMARY KEY,
  domain TEXT NOT NULL,
  start_ts INTEGER NOT NULL,
  end_ts INTEGER,
  last_seen INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  min_hz INTEGER,
  max_hz INTEGER,
  cause TEXT NOT NULL CHECK (cause IN ('thermal', 'cap')),
  method TEXT NOT NULL CHECK (method IN ('poll', 'counters')),
  zone TEXT,
  trip INTEGER,
  trip_temp_mc INTEGER,
  trip_hyst_mc INTEGER,
  temp_start_mc INTEGER,
  temp_peak_mc INTEGER,
  cooling TEXT NOT NULL DEFAULT '',
  stuck INTEGER NOT NULL DEFAULT 0 CHECK (stuck IN (0, 1)),
  CHECK (end_ts IS NULL OR end_ts >= start_ts),
  CHECK (last_seen >= start_ts)
) STRICT;
CREATE INDEX IF NOT EXISTS throttle_episodes_start ON throttle_episodes (start_ts);
CREATE INDEX IF NOT EXISTS throttle_episodes_end ON throttle_episodes (end_ts);
