-- 0010_change_rename: a rename's fields (diff.Change.RenamedTo on the
-- removed file, RenamedFrom on the added one, Similarity in percent, and
-- RenameDiff, the added file's diff from the old one), so a run reopened
-- from the history shows the rename, its similarity and its diff once, as
-- the report did. Hashed with the change's kind only when set: older runs keep
-- their hashes.

ALTER TABLE changes ADD COLUMN renamed_to BLOB NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN renamed_from BLOB NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN similarity INTEGER NOT NULL DEFAULT 0;
ALTER TABLE changes ADD COLUMN rename_diff BLOB NOT NULL DEFAULT '';
