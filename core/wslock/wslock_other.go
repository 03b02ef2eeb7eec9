//go:build !unix

package wslock

import "os"

// tryLock always succeeds: this platform has no flock, so runs are not
// kept apart.
func tryLock(*os.File, bool) (bool, error) { return true, nil }

func ownDir(string) error { return nil }

func otherRun(string, *os.File) (string, int) { return "", 0 }
