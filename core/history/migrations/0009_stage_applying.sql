-- 0009_stage_applying: a stage event 'applying' is recorded (with its
-- decision and paths) before an apply writes anything, so an apply that
-- is killed midway is known from the history alone: apply resumes it from
-- the run's record, and a new run on the workspace is refused until then.
-- SQLite cannot alter a CHECK: the table is rebuilt with its rows and ids
-- unchanged (the chain's links name them by id).

CREATE TABLE stage_events_new (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id   INTEGER NOT NULL REFERENCES runs (id),
    event    TEXT    NOT NULL CHECK (event IN ('applying', 'applied', 'partially-applied', 'discarded', 'expired')),
    decision TEXT    NOT NULL DEFAULT '',
    paths    BLOB    NOT NULL DEFAULT x'',
    at       TEXT    NOT NULL
);
INSERT INTO stage_events_new (id, run_id, event, decision, paths, at)
    SELECT id, run_id, event, decision, paths, at FROM stage_events ORDER BY id;
DROP TABLE stage_events;
ALTER TABLE stage_events_new RENAME TO stage_events;
CREATE INDEX stage_events_run ON stage_events (run_id, id);
