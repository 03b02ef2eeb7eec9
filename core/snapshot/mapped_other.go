//go:build !linux

package snapshot

// devIno identifies a file.
type devIno struct{ dev, ino uint64 }

// sharedWritable is not known on this platform: the hash cache trusts ctime.
func sharedWritable() map[devIno]bool { return nil }
