//go:build unix && !linux

package snapshot

// oNoAtime is 0 where open has no O_NOATIME.
const oNoAtime = 0
