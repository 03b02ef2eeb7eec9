-- 0003_run_extra: the report extensions a run row did not hold: the
-- interpreter that ran the script (script.command), inline code
-- (script.inline), what became of the supervisor (process.supervisor) and
-- the entries the gate could not read (unreadable). One encoded BLOB (see
-- encodeExtra in codec.go), empty when the run has none of them; a run's
-- hash covers it only when it is not empty, so older runs keep their hashes.

ALTER TABLE runs ADD COLUMN extra BLOB NOT NULL DEFAULT x'';
