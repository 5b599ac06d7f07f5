-- thermlog schema 5: the CHECK constraints on cycles.clock, samples.clock and
-- channels.present written as ranges. As IN lists, SQLite built a temporary table for them on
-- every insert: two per cycle. The columns are STRICT integers, so a range refuses exactly
-- what the list refused, and no stored row changes: only the schema text is rewritten, the
-- way SQLite documents for a constraint change that leaves the stored format alone
-- (https://sqlite.org/lang_altertable.html#otheralter). RESET makes this connection parse the
-- new text; another connection keeps the old, equivalent, constraints until it reopens.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'clock IN (0, 1, 2)', 'clock BETWEEN 0 AND 2')
  WHERE type = 'table' AND name IN ('cycles', 'samples');
UPDATE sqlite_schema SET sql = replace(sql, 'present IN (0, 1)', 'present BETWEEN 0 AND 1')
  WHERE type = 'table' AND name = 'channels';
PRAGMA writable_schema = RESET;
