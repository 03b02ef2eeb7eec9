-- 0005_change_note: why a change has no text diff (diff_note: binary,
-- too-large, not-kept, budget), so a run reopened from the history says it
-- as the report did. Hashed with the change only when set: older runs keep
-- their hashes.

ALTER TABLE changes ADD COLUMN diff_note TEXT NOT NULL DEFAULT '';
