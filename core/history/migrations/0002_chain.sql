-- 0002_chain: approved allowlists and reviewers' decisions join the runs'
-- hash chain, so that editing, inserting or deleting any of them behind
-- diffgate's back is caught by Verify.
--
-- chain lists every link in order. A link's hash is hex SHA-256 over the
-- previous link's hash and the SHA-256 of a canonical encoding of the row it
-- stands for (see core/history/chain.go); for a run it equals runs.hash, so
-- the runs of an older database keep their hashes. The allowlists and
-- decisions an older database already holds are appended by the migration
-- (in Go, see adoptIntoChain): they are trusted as found.

CREATE TABLE chain (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT    NOT NULL CHECK (kind IN ('run', 'allowlist', 'decision')),
    ref  INTEGER NOT NULL, -- runs.id, allowlists.id or decisions.id
    hash TEXT    NOT NULL,
    UNIQUE (kind, ref)
);

INSERT INTO chain (kind, ref, hash) SELECT 'run', id, hash FROM runs ORDER BY id;
