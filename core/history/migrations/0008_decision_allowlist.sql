-- 0008_decision_allowlist: the allowlist version an approval approved, so a
-- reopened run says which version that was (0: a rejection, or a decision
-- from before this column). Hashed with the decision only when set: older
-- decisions keep their links.

ALTER TABLE decisions ADD COLUMN allowlist_version INTEGER NOT NULL DEFAULT 0;
