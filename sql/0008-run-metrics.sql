-- thermlog schema 8: a run's metrics, numbers it carries of its own (an operator's latency,
-- images per hour, tokens/s): from the THERMLOG_METRICS file `thermlog run` reads when the
-- command ends, `--metric`, `thermlog runs metric`, or a job log's metric: columns. One row per
-- run and name; value is finite; unit is '' when none was ever given for the name, else the one
-- unit of that name in this database (a metric given without one takes it).
CREATE TABLE IF NOT EXISTS run_metrics (
  run_id INTEGER NOT NULL REFERENCES runs (id),
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  value REAL NOT NULL,
  unit TEXT NOT NULL DEFAULT '' CHECK (length(unit) <= 32),
  PRIMARY KEY (run_id, name)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_metrics_name ON run_metrics (name, unit);
