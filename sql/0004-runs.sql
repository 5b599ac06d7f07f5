-- thermlog schema 4: runs, what each job costs the board. A run is one execution of a job
-- (a command wrapped by `thermlog run`, a start/stop pair from an orchestrator, or a row of an
-- imported job log). Run times are ms since epoch, UTC, so imported logs keep their fractions.

-- One row per run. status is 'running' until the run ends; an imported run is never running.
-- tags and fingerprint are JSON objects; figures is the JSON computed when the run ends
-- (residency per cluster and devfreq device, cooling, heat, memory, the methods used);
-- start_snapshot holds the kernel counters read at start (cpufreq time_in_state, devfreq
-- trans_stat, cooling time_in_state_ms, hwmon energy), so a stop after a daemon restart still
-- has its deltas. import_key makes a re-import change nothing.
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '{}',
  start_ms INTEGER NOT NULL,
  end_ms INTEGER,
  status TEXT NOT NULL
    CHECK (status IN ('running', 'ok', 'failed', 'signaled', 'timeout', 'lost')),
  exit_code INTEGER,
  signal INTEGER,
  pid INTEGER,
  boot INTEGER REFERENCES boots (id),
  origin TEXT NOT NULL CHECK (origin IN ('live', 'import')),
  import_key TEXT UNIQUE,
  energy_j REAL,
  energy_method TEXT,
  energy_coverage REAL,
  temp_max_c REAL,
  rss_max_bytes INTEGER,
  start_snapshot TEXT,
  figures TEXT,
  fingerprint TEXT,
  CHECK (end_ms IS NULL OR end_ms >= start_ms),
  CHECK ((status = 'running') = (end_ms IS NULL))
) STRICT;
CREATE INDEX IF NOT EXISTS runs_start ON runs (start_ms);
CREATE INDEX IF NOT EXISTS runs_label_start ON runs (label, start_ms);

-- The fast samples taken while any run is active (runs.interval, default 5 s), one row per
-- sampling instant, shared by overlapping runs and found by their time windows. data packs
-- the readings like samples.data (channel id delta, zigzag q at the channel's resolution).
-- The one-minute series (samples, rollups) never sees these rows.
CREATE TABLE IF NOT EXISTS run_samples (
  ts_ms INTEGER PRIMARY KEY,
  data BLOB NOT NULL
) STRICT;
