//go:build !testhooks

package main

import (
	"net/netip"

	"github.com/diffgate/diffgate/core/contain"
)

// A release build: no test hook, nothing read from the environment
// (testhooks_testhooks.go has the hooks for tests).

func containTestHooks(*contain.Policy) {}

func applyTestHook() func(int) { return nil }

func netHostsTestHook() map[string][]netip.Addr { return nil }
