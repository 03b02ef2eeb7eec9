//go:build testhooks

package main

import (
	"github.com/diffgate/diffgate/core/pipeline"

	"os"
	"strconv"
)

// This file exists only in a build with -tags testhooks (make unit,
// internal/testenv's CLI build): the switches below let tests pretend a
// layer is missing or kill an apply midway. A release build
// (testhooks_release.go) has none of them, so no environment variable can
// turn containment off in a shipped binary.

// applyKillEnv names a test hook: an apply kills itself with SIGKILL after
// that many operations (tests prove that running apply again completes
// it). Ignored unless set to a positive number.
const applyKillEnv = "DIFFGATE_TEST_APPLY_KILL_AFTER"

// containTestHooks pretends the kernel lacks Landlock, seccomp user
// notification or mount namespaces when the test asks for it.
func containTestHooks(pol *pipeline.ContainPolicy) {
	pol.NoLandlock = os.Getenv("DIFFGATE_TEST_NO_LANDLOCK") != ""
	pol.NoNotify = os.Getenv("DIFFGATE_TEST_NO_NOTIFY") != ""
	pol.NoMounts = os.Getenv("DIFFGATE_TEST_NO_MOUNTS") != ""
}

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
