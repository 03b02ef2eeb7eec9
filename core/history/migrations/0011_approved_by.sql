-- 0011_approved_by: who approved an allowlist version (the user name on
-- this machine; on a team store, the database role), so a run that uses it
-- says who approved it and when. Hashed with the allowlist only when set:
-- older versions keep their links.

ALTER TABLE allowlists ADD COLUMN approved_by TEXT NOT NULL DEFAULT '';
