-- 0006_links_inside: for a change carrying the risk hardlink-escape, how
-- many of the file's names lie in the workspace (its link count is in the
-- after entry), so a reopened run says "2 links, 1 in the workspace" as the
-- report did. Hashed with the change's risk only when set: older runs keep
-- their hashes.

ALTER TABLE changes ADD COLUMN links_inside INTEGER NOT NULL DEFAULT 0;
