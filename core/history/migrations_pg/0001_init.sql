-- 0001_init: the team store's schema on PostgreSQL, the SQLite schema at
-- version 10 (see ../migrations) in PostgreSQL's types: BLOB is bytea,
-- INTEGER bigint (boolean for the flags), TEXT text. diffgate_schema holds
-- the version (SQLite's PRAGMA user_version).
--
-- Ids and chain positions are max + 1, set by a trigger under the writers'
-- advisory lock (pg_advisory_xact_lock), never by a sequence: a rolled-back
-- insert leaves no gap that Verify would take for a deleted row.
--
-- Tamper evidence: the tables that form the hash chain (runs, changes,
-- allowlists, decisions, stage_events, chain) and the content store reject
-- UPDATE, DELETE and TRUNCATE by trigger, for every role, their owner's
-- included; only the owner can disable a trigger, and Verify catches what
-- is edited then. The roles diffgate_ci (records runs) and
-- diffgate_reviewer (also approves allowlists and decides on runs) get
-- INSERT and SELECT on them and nothing more.

CREATE TABLE diffgate_schema (version integer NOT NULL);

CREATE TABLE runs (
    id                bigint  PRIMARY KEY,
    workspace         bytea   NOT NULL,
    script_path       bytea   NOT NULL,
    script_sha256     text    NOT NULL,
    script_text       bytea   NOT NULL,
    args              bytea   NOT NULL,
    allowlist         bytea   NOT NULL,
    allowlist_version bigint  NOT NULL DEFAULT 0,
    started_at        text    NOT NULL,
    finished_at       text    NOT NULL,
    verdict           text    NOT NULL CHECK (verdict IN ('pass', 'fail')),
    reasons           bytea   NOT NULL,
    exit_code         bigint  NOT NULL,
    signal            text    NOT NULL,
    timed_out         boolean NOT NULL,
    timeout           text    NOT NULL,
    cancelled         boolean NOT NULL,
    leftovers         bytea   NOT NULL,
    stdout_head       bytea   NOT NULL,
    stdout_tail       bytea   NOT NULL,
    stderr_head       bytea   NOT NULL,
    stderr_tail       bytea   NOT NULL,
    added             bigint  NOT NULL,
    removed           bigint  NOT NULL,
    changed           bigint  NOT NULL,
    violations        bigint  NOT NULL,
    hash              text    NOT NULL,
    extra             bytea   NOT NULL DEFAULT ''::bytea
);
CREATE INDEX runs_workspace ON runs (workspace, id);

CREATE TABLE changes (
    run_id       bigint  NOT NULL REFERENCES runs (id),
    seq          bigint  NOT NULL,
    path         bytea   NOT NULL,
    kind         text    NOT NULL CHECK (kind IN ('added', 'removed', 'changed')),
    aspects      text    NOT NULL,
    before       bytea,
    after        bytea,
    allowed      boolean NOT NULL,
    rule         bytea   NOT NULL,
    risk         text    NOT NULL,
    text_diff    bytea   NOT NULL,
    diff_note    text    NOT NULL DEFAULT '',
    links_inside bigint  NOT NULL DEFAULT 0,
    renamed_to   bytea   NOT NULL DEFAULT '',
    renamed_from bytea   NOT NULL DEFAULT '',
    similarity   bigint  NOT NULL DEFAULT 0,
    rename_diff  bytea   NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE contents (
    sha256   text   PRIMARY KEY,
    size     bigint NOT NULL,
    encoding text   NOT NULL CHECK (encoding IN ('raw', 'deflate')),
    data     bytea  NOT NULL
);

CREATE TABLE allowlists (
    id          bigint PRIMARY KEY,
    workspace   bytea  NOT NULL,
    version     bigint NOT NULL CHECK (version >= 1),
    entries     bytea  NOT NULL,
    note        text   NOT NULL,
    created_at  text   NOT NULL,
    -- The database role that approved: the server says who, not the client.
    approved_by text   NOT NULL DEFAULT current_user CHECK (approved_by = current_user),
    UNIQUE (workspace, version)
);

CREATE TABLE decisions (
    id                bigint PRIMARY KEY,
    run_id            bigint NOT NULL REFERENCES runs (id),
    decision          text   NOT NULL CHECK (decision IN ('approve', 'reject')),
    note              text   NOT NULL,
    decided_at        text   NOT NULL,
    allowlist_version bigint NOT NULL DEFAULT 0
);
CREATE INDEX decisions_run ON decisions (run_id, id);

CREATE TABLE hash_cache (
    workspace bytea  PRIMARY KEY,
    run_id    bigint NOT NULL,
    entries   bigint NOT NULL,
    data      bytea  NOT NULL
);

CREATE TABLE chain (
    seq  bigint PRIMARY KEY,
    kind text   NOT NULL CHECK (kind IN ('run', 'allowlist', 'decision', 'stage')),
    ref  bigint NOT NULL,
    hash text   NOT NULL,
    UNIQUE (kind, ref)
);

CREATE TABLE stage_events (
    id       bigint PRIMARY KEY,
    run_id   bigint NOT NULL REFERENCES runs (id),
    event    text   NOT NULL CHECK (event IN ('applying', 'applied', 'partially-applied', 'discarded', 'expired')),
    decision text   NOT NULL DEFAULT '',
    paths    bytea  NOT NULL DEFAULT ''::bytea,
    at       text   NOT NULL
);
CREATE INDEX stage_events_run ON stage_events (run_id, id);

CREATE TABLE viewed (
    run_id bigint NOT NULL REFERENCES runs (id),
    path   bytea  NOT NULL,
    at     text   NOT NULL,
    PRIMARY KEY (run_id, path)
);

CREATE TABLE text_store (
    id        bigint PRIMARY KEY,
    workspace bytea  NOT NULL,
    sha256    text   NOT NULL,
    size      bigint NOT NULL,
    stored    bigint NOT NULL,
    encoding  text   NOT NULL CHECK (encoding IN ('raw', 'deflate')),
    data      bytea  NOT NULL,
    used      bigint NOT NULL,
    UNIQUE (workspace, sha256)
);
CREATE INDEX text_store_lru ON text_store (workspace, used);

CREATE TABLE text_missed (
    workspace bytea NOT NULL,
    sha256    text  NOT NULL,
    PRIMARY KEY (workspace, sha256)
);

-- The next id (TG_ARGV[0] names the key column): max + 1.
CREATE FUNCTION diffgate_next_id() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    next bigint;
BEGIN
    IF to_jsonb(NEW) ->> TG_ARGV[0] IS NULL THEN
        EXECUTE format('SELECT coalesce(max(%I), 0) + 1 FROM %I.%I', TG_ARGV[0], TG_TABLE_SCHEMA, TG_TABLE_NAME) INTO next;
        NEW := jsonb_populate_record(NEW, jsonb_build_object(TG_ARGV[0], next));
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION diffgate_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'diffgate: % on % refused: the history is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;

-- An approval's or a decision's link comes from a reviewer (or the owner):
-- CI, which may link its runs, cannot take their place in the chain.
CREATE FUNCTION diffgate_chain_kind() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind IN ('allowlist', 'decision')
        AND NOT pg_has_role(current_user, 'diffgate_reviewer', 'USAGE')
        AND current_user <> (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = TG_RELID) THEN
        RAISE EXCEPTION 'diffgate: permission denied: a % link needs the diffgate_reviewer role', NEW.kind
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['runs', 'allowlists', 'decisions', 'stage_events', 'text_store'] LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %I FOR EACH ROW EXECUTE FUNCTION diffgate_next_id(%L)', t || '_next_id', t, 'id');
    END LOOP;
    EXECUTE 'CREATE TRIGGER chain_next_id BEFORE INSERT ON chain FOR EACH ROW EXECUTE FUNCTION diffgate_next_id(''seq'')';
    FOREACH t IN ARRAY ARRAY['runs', 'changes', 'contents', 'allowlists', 'decisions', 'stage_events', 'chain'] LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION diffgate_append_only()', t || '_append_only', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION diffgate_append_only()', t || '_no_truncate', t);
    END LOOP;
END $$;

-- The roles: created here when the migrating role may (CREATEROLE), else
-- by an administrator beforehand (see the team setup).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'diffgate_ci') THEN
        CREATE ROLE diffgate_ci NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'diffgate_reviewer') THEN
        CREATE ROLE diffgate_reviewer NOLOGIN;
    END IF;
END $$;

REVOKE ALL ON diffgate_schema, runs, changes, contents, allowlists, decisions, hash_cache, chain,
    stage_events, viewed, text_store, text_missed FROM PUBLIC;
GRANT SELECT ON diffgate_schema, runs, changes, contents, allowlists, decisions, hash_cache, chain,
    stage_events, viewed, text_store, text_missed TO diffgate_ci, diffgate_reviewer;
-- Recording a run (and its stage's events, its contents, the hash cache and
-- the text store, which are caches, not records).
GRANT INSERT ON runs, changes, contents, chain, stage_events TO diffgate_ci, diffgate_reviewer;
GRANT INSERT, UPDATE, DELETE ON hash_cache, text_store, text_missed TO diffgate_ci, diffgate_reviewer;
-- Approving and deciding: reviewers only.
GRANT INSERT ON allowlists, decisions TO diffgate_reviewer;
GRANT INSERT, DELETE ON viewed TO diffgate_reviewer;

CREATE TRIGGER chain_kind BEFORE INSERT ON chain FOR EACH ROW EXECUTE FUNCTION diffgate_chain_kind();
