package proc

// Overlay asks the supervisor to run the script against an overlayfs view
// of the workspace: Lower (the workspace, Spec.Dir or a directory above
// it) stays untouched, every write lands in Upper, and Work is overlayfs's
// work directory (on the same filesystem as Upper, empty). The supervisor
// is started in a mount namespace of its own (as a normal user, also in a
// user namespace mapping the user's uid and gid to themselves: the script
// never runs as uid 0), makes the mount tree private and mounts the overlay
// at Lower with the userxattr option before it execs the script. The mount
// lives only in that namespace and dies with the last process in it. Only
// Linux has it: elsewhere Run fails. A failure to set it up fails Run with
// an error naming the step (see core/stage's Probe for the fallback).
type Overlay struct {
	Lower string `json:"lower"`
	Upper string `json:"upper"`
	Work  string `json:"work"`
	// UserXattr mounts with "userxattr": overlayfs keeps its own
	// attributes as user.overlay.* (a normal user, in a user namespace,
	// has no other choice) instead of trusted.overlay.* (root), and a
	// script cannot set a user.overlay.* attribute of its own.
	UserXattr bool `json:"userxattr,omitempty"`
	// Copy, instead of an overlay, bind-mounts Upper (a copy of the
	// workspace, core/stage's copy stage) over Lower: the script runs at
	// the workspace's own path (absolute paths it writes, a venv's
	// shebangs, name the workspace), every write lands in the copy. Work
	// is not used.
	Copy bool `json:"copy,omitempty"`
}
