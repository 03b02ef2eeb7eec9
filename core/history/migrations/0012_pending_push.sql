-- 0012_pending_push: runs recorded here because the team store they were
-- meant for could not be reached, until diffgate history push sends them
-- (store: the team store's URL without its password). Bookkeeping, not a
-- record: not in the hash chain.

CREATE TABLE pending_push (
    run_id INTEGER PRIMARY KEY REFERENCES runs (id),
    store  TEXT    NOT NULL
);
