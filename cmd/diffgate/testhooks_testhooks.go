//go:build testhooks

package main

import (
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/diffgate/diffgate/core/pipeline"
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

// netHostsEnv names a test hook: the host names it lists (comma-separated)
// resolve to 127.0.0.1 in the proxy of --net-allow (its resolver
// override), so a test serves a tool's registry locally under a made-up
// name without touching /etc/hosts.
const netHostsEnv = "DIFFGATE_TEST_NET_HOSTS"

func netHostsTestHook() map[string][]netip.Addr {
	var m map[string][]netip.Addr
	for _, h := range strings.Split(os.Getenv(netHostsEnv), ",") {
		if h = strings.TrimSpace(h); h != "" {
			if m == nil {
				m = map[string][]netip.Addr{}
			}
			m[h] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		}
	}
	return m
}

// granularityTestHook is the timestamp granularity the run's snapshots
// assume for hash reuse (DIFFGATE_TEST_GRANULARITY, a duration; 0: the
// default), so that a test of hash reuse need not wait 2 s for its files
// to age.
func granularityTestHook() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("DIFFGATE_TEST_GRANULARITY"))
	return max(d, 0)
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
