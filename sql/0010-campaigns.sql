-- thermlog schema 10: campaigns (thermlog campaign run SUITE.yaml). A campaign runs a declared
-- suite of steps as ordinary recorded runs through the daemon, each cold repetition behind a
-- thermal gate on the board's idle baseline; its state lives here so that a resume after a
-- reboot, a power loss or kill -9 goes on with the first repetition not recorded as ended.
-- Times are ms since epoch, UTC, as the runs'.

-- One row per campaign. suite is the suite's canonical JSON and suite_hash its sha256 (a
-- resume refuses another); suite_text is the file as read, so a refusal can name what changed.
-- status: running while a runner works on it (runner_pid, with its start time in clock ticks
-- after boot, tells a live runner from a reused pid), stopped when it ended early, done at its
-- end. fingerprint is the board at the start (JSON: clocks with the highest reached in the
-- burst, governors and tunables, trips, cooling devices, RAM, kernel, device tree, NPU driver,
-- the steps' executables); baseline the idle baseline per watched zone (JSON).
CREATE TABLE IF NOT EXISTS campaigns (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  board TEXT,
  suite_path TEXT NOT NULL,
  suite_hash TEXT NOT NULL,
  suite TEXT NOT NULL,
  suite_text TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  ended_ms INTEGER,
  status TEXT NOT NULL CHECK (status IN ('running', 'stopped', 'done')),
  runner_pid INTEGER,
  runner_start INTEGER,
  fingerprint TEXT,
  baseline TEXT,
  idle_run INTEGER REFERENCES runs (id),
  burst_run INTEGER REFERENCES runs (id)
) STRICT;
CREATE INDEX IF NOT EXISTS campaigns_name ON campaigns (name, created_ms);

-- One row per repetition started: its run (the run's status says how it ended: a run cut by a
-- fault is lost and its repetition runs again), how it started (start: cold, warm or any; warm
-- after warm_ms since the step's previous repetition ended) and the gate before it (passed,
-- timeout after the maximum wait, or none), the time waited at the gate and why, and the
-- metrics the step expects that the run did not report (missing_metrics, "" when complete).
CREATE TABLE IF NOT EXISTS campaign_runs (
  campaign INTEGER NOT NULL REFERENCES campaigns (id),
  seq INTEGER NOT NULL,
  step TEXT NOT NULL,
  rep INTEGER NOT NULL CHECK (rep >= 1),
  warmup INTEGER NOT NULL CHECK (warmup IN (0, 1)),
  run INTEGER NOT NULL REFERENCES runs (id),
  start TEXT NOT NULL CHECK (start IN ('cold', 'warm', 'any')),
  gate TEXT NOT NULL CHECK (gate IN ('passed', 'timeout', 'none')),
  gate_wait_ms INTEGER NOT NULL CHECK (gate_wait_ms >= 0),
  gate_detail TEXT,
  warm_ms INTEGER,
  missing_metrics TEXT,
  PRIMARY KEY (campaign, seq)
) STRICT;
CREATE INDEX IF NOT EXISTS campaign_runs_run ON campaign_runs (run);
