//go:build !linux

package testenv

// ContainmentLayers says what this machine lacks for a contained run: on
// this platform, everything.
func ContainmentLayers() string { return "no containment on this platform" }
