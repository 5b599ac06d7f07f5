-- thermlog schema 6: runs.error, why a run failed when the cause is not an exit code (a
-- command that could not start: "ARGV0: No such file or directory (command not found)").
-- NULL for every run before it and for every run that started.
ALTER TABLE runs ADD COLUMN error TEXT;
