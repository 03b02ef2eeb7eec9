package main

import (
	"os"
	"strconv"
)

// applyKillEnv names a test hook: an apply kills itself with SIGKILL after
// that many operations (tests prove that running apply again completes
// it). Ignored unless set to a positive number.
const applyKillEnv = "DIFFGATE_TEST_APPLY_KILL_AFTER"

func applyTestHook() func(int) {
	n, err := strconv.Atoi(os.Getenv(applyKillEnv))
	if err != nil || n <= 0 {
		return nil
	}
	return func(done int) {
		if done >= n {
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Kill() // SIGKILL on Unix
			}
			select {} // wait for the signal
		}
	}
}
