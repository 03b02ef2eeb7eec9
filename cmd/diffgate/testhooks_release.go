//go:build !testhooks

package main

import (
	"net/netip"

	"time"

	"github.com/diffgate/diffgate/core/pipeline"
)

// A release build: no test hook, nothing read from the environment
// (testhooks_testhooks.go has the hooks for tests).

func containTestHooks(*pipeline.ContainPolicy) {}

func applyTestHook() func(int) { return nil }

func netHostsTestHook() map[string][]netip.Addr { return nil }

func granularityTestHook() time.Duration { return 0 }
