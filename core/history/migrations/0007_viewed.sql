-- 0007_viewed: the reviewer's viewed marks, one row per change of a run
-- the reviewer marked as looked at (GitHub's "Viewed" check), so a run
-- reopened from the history shows how far its review got.
--
-- Viewed marks are the reviewer's progress, not a record: they are not in
-- the hash chain (a mark is set and cleared as the reviewer goes, and
-- nothing is decided by it), so Verify neither covers nor needs them.

CREATE TABLE viewed (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    path   BLOB    NOT NULL, -- the change's path (changes.path)
    at     TEXT    NOT NULL,
    PRIMARY KEY (run_id, path)
) WITHOUT ROWID;
