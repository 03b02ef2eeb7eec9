-- 0013_workspace_shape: what the latest full walk of a workspace found that
-- a staged run needs before its script runs (core/stage.Shape: whether an
-- overlay can stage the workspace faithfully, its git directories, its
-- unreadable entries): an overlay-staged run that has it reads only what the
-- script changed. A cache like hash_cache: not part of the chain.
CREATE TABLE workspace_shape (
    workspace  BLOB    PRIMARY KEY,
    run_id     INTEGER NOT NULL,
    data       BLOB    NOT NULL
);
