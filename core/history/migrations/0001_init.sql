-- 0001_init: the first schema of the diffgate history database.
--
-- Conventions:
--   * Paths (workspace, script, change paths, rules) are BLOBs holding the raw
--     bytes, so newlines and invalid UTF-8 survive.
--   * Times are TEXT in RFC 3339 with nanoseconds and the original offset.
--   * "list" BLOBs hold a list of strings: uvarint count, then each string as
--     uvarint length + bytes. "leftovers" holds uvarint count, then per
--     process a varint pid and a string.
--   * runs.hash chains every run to the previous one (tamper evidence):
--     hex SHA-256 over the previous run's hash and the SHA-256 of a canonical
--     encoding of the run row and its changes (see core/history/canon.go).

PRAGMA application_id = 1147619412; -- 0x44674854 "DgHT": a diffgate history

CREATE TABLE runs (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace         BLOB    NOT NULL,
    script_path       BLOB    NOT NULL,
    script_sha256     TEXT    NOT NULL,
    script_text       BLOB    NOT NULL,
    args              BLOB    NOT NULL, -- list
    allowlist         BLOB    NOT NULL, -- list: the entries the run used
    allowlist_version INTEGER NOT NULL DEFAULT 0, -- 0: not an approved allowlist
    started_at        TEXT    NOT NULL,
    finished_at       TEXT    NOT NULL,
    verdict           TEXT    NOT NULL CHECK (verdict IN ('pass', 'fail')),
    reasons           BLOB    NOT NULL, -- list
    exit_code         INTEGER NOT NULL,
    signal            TEXT    NOT NULL,
    timed_out         INTEGER NOT NULL,
    timeout           TEXT    NOT NULL,
    cancelled         INTEGER NOT NULL,
    leftovers         BLOB    NOT NULL, -- leftovers
    stdout_head       BLOB    NOT NULL,
    stdout_tail       BLOB    NOT NULL,
    stderr_head       BLOB    NOT NULL,
    stderr_tail       BLOB    NOT NULL,
    added             INTEGER NOT NULL,
    removed           INTEGER NOT NULL,
    changed           INTEGER NOT NULL,
    violations        INTEGER NOT NULL,
    hash              TEXT    NOT NULL
);
CREATE INDEX runs_workspace ON runs (workspace, id);

CREATE TABLE changes (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL, -- position in the report
    path      BLOB    NOT NULL,
    kind      TEXT    NOT NULL CHECK (kind = 'added' OR kind = 'removed' OR kind = 'changed'),
    aspects   TEXT    NOT NULL, -- comma-separated
    before    BLOB,             -- entry metadata (see encodeEntry in codec.go); NULL when absent
    after     BLOB,
    allowed   INTEGER NOT NULL,
    rule      BLOB    NOT NULL,
    risk      TEXT    NOT NULL,
    text_diff BLOB    NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- Content-addressed copies of changed files' before and after contents.
CREATE TABLE contents (
    sha256   TEXT    PRIMARY KEY, -- hex SHA-256 of the uncompressed content
    size     INTEGER NOT NULL,
    encoding TEXT    NOT NULL CHECK (encoding IN ('raw', 'deflate')),
    data     BLOB    NOT NULL
);

-- Approved allowlists, versioned per workspace (absolute path).
CREATE TABLE allowlists (
    id         INTEGER PRIMARY KEY,
    workspace  BLOB    NOT NULL,
    version    INTEGER NOT NULL CHECK (version >= 1),
    entries    BLOB    NOT NULL, -- list
    note       TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    UNIQUE (workspace, version)
);

-- Reviewers' decisions on runs; the latest one counts.
CREATE TABLE decisions (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    decision   TEXT    NOT NULL CHECK (decision IN ('approve', 'reject')),
    note       TEXT    NOT NULL,
    decided_at TEXT    NOT NULL
);
CREATE INDEX decisions_run ON decisions (run_id, id);

-- Per workspace, the file entries of the latest after-manifest, so the next
-- run's before-snapshot can reuse hashes. One compressed BLOB (see cache.go).
CREATE TABLE hash_cache (
    workspace  BLOB    PRIMARY KEY,
    run_id     INTEGER NOT NULL,
    entries    INTEGER NOT NULL,
    data       BLOB    NOT NULL
);
