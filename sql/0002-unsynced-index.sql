-- thermlog schema 2: counting unsynced cycles (store_info) without scanning every cycle.
-- Partial: only unsynced cycles have entries, so a normal cycle writes nothing more.
CREATE INDEX IF NOT EXISTS cycles_unsynced ON cycles (ts) WHERE clock = 2;
