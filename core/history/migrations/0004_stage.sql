-- 0004_stage: what became of a staged run's stage. A staged run keeps its
-- stage's id and mechanism in runs.extra (version 2, hashed with the run);
-- each later event (applied, partially-applied, discarded, expired) is a
-- stage_events row, a link of the hash chain like a decision. paths lists
-- the applied paths (encodeList), decision says how they were chosen: all,
-- only-allowed or subset ('' for discarded and expired).
--
-- The chain's kind CHECK gains 'stage': SQLite cannot alter a CHECK, so the
-- table is rebuilt with its links and their seq numbers unchanged.

CREATE TABLE stage_events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id   INTEGER NOT NULL REFERENCES runs (id),
    event    TEXT    NOT NULL CHECK (event IN ('applied', 'partially-applied', 'discarded', 'expired')),
    decision TEXT    NOT NULL DEFAULT '',
    paths    BLOB    NOT NULL DEFAULT x'',
    at       TEXT    NOT NULL
);
CREATE INDEX stage_events_run ON stage_events (run_id, id);

CREATE TABLE chain_new (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT    NOT NULL CHECK (kind IN ('run', 'allowlist', 'decision', 'stage')),
    ref  INTEGER NOT NULL,
    hash TEXT    NOT NULL,
    UNIQUE (kind, ref)
);
INSERT INTO chain_new (seq, kind, ref, hash) SELECT seq, kind, ref, hash FROM chain ORDER BY seq;
DROP TABLE chain;
ALTER TABLE chain_new RENAME TO chain;
