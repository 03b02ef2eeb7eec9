package ui

import (
	"bytes"
	"strings"
	"testing"
)

// TestScreenshotFlags: the --screenshot-* flags parse into Flags.Shot.
func TestScreenshotFlags(t *testing.T) {
	var out bytes.Buffer
	f, err := ParseFlags([]string{"--screenshot", "x.png", "--screenshot-size", "1024x700", "--screenshot-tab", "history",
		"--screenshot-split", "--screenshot-select", "config.json"}, &out)
	want := ShotFlags{Width: 1024, Height: 700, Tab: ShotHistory, Split: true, Select: "config.json"}
	if err != nil || f.Shot != want || out.Len() != 0 {
		t.Fatalf("got %+v, %v, %q; want %+v", f.Shot, err, out.String(), want)
	}
	f, err = ParseFlags([]string{"--screenshot", "x.png"}, &out)
	if want := (ShotFlags{Tab: ShotReview}); err != nil || f.Shot != want {
		t.Errorf("defaults: got %+v, %v; want %+v", f.Shot, err, want)
	}
}

// TestScreenshotFlagsBadValues: a bad --screenshot-* value is one line
// naming the flag and exit status 2, never a panic or a window of a
// size nobody asked for.
func TestScreenshotFlagsBadValues(t *testing.T) {
	for _, args := range [][]string{
		{"--screenshot-size", "10x"},
		{"--screenshot-size", "x700"},
		{"--screenshot-size", "1024"},
		{"--screenshot-size", "0x700"},
		{"--screenshot-size", "-5x5"},
		{"--screenshot-size", "1024x700x2"},
		{"--screenshot-size", "1e3x700"},
		{"--screenshot-size", "1024.5x700"},
		{"--screenshot-size", "99999x700"},
		{"--screenshot-size", " 1024x700"},
		{"--screenshot-tab", "settings"},
		{"--screenshot-tab", ""},
	} {
		var out bytes.Buffer
		_, err := ParseFlags(append([]string{"--screenshot", "x.png"}, args...), &out)
		if err == nil || UsageExitCode(err) != 2 {
			t.Errorf("%q: got %v, want a usage error", args, err)
			continue
		}
		msg := out.String()
		if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "diffgate-app: "+args[0]) {
			t.Errorf("%q: want one line naming the flag, got %q", args, msg)
		}
	}
}

// TestScreenshotFlagsNeedScreenshot: the --screenshot-* flags say so when
// there is no --screenshot to apply them to.
func TestScreenshotFlagsNeedScreenshot(t *testing.T) {
	for _, args := range [][]string{
		{"--screenshot-size", "1024x700"},
		{"--screenshot-tab", "run"},
		{"--screenshot-split"},
		{"--screenshot-select", "a"},
	} {
		var out bytes.Buffer
		_, err := ParseFlags(args, &out)
		if err == nil || UsageExitCode(err) != 2 || out.String() != "diffgate-app: "+args[0]+" goes with --screenshot FILE\n" {
			t.Errorf("%q: got %v, %q", args, err, out.String())
		}
	}
}
