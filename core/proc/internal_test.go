package proc

import (
	"bytes"
	"math/rand"
	"os"
	"slices"
	"testing"
)

func TestCaptureHeadTail(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, keep := range []int{0, 1, 7, 16} {
		for _, n := range []int{0, 1, 5, 7, 8, 14, 15, 16, 17, 31, 32, 33, 100, 1000} {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte('a' + i%26)
			}
			for trial := 0; trial < 20; trial++ {
				c := capture{keep: keep}
				for rest := data; len(rest) > 0; {
					k := 1 + rng.Intn(min(len(rest), 3*keep+5))
					c.write(rest[:k])
					rest = rest[k:]
				}
				got := c.result()
				wantHead := data[:min(keep, n)]
				wantTail := data[min(n, max(keep, n-keep)):]
				if got.Total != int64(n) || !bytes.Equal(got.Head, wantHead) || !bytes.Equal(got.Tail, wantTail) {
					t.Fatalf("keep=%d n=%d: got head %q tail %q total %d; want %q %q %d",
						keep, n, got.Head, got.Tail, got.Total, wantHead, wantTail, n)
				}
				if got.Truncated() != (n > 2*keep) {
					t.Fatalf("keep=%d n=%d: Truncated()=%v", keep, n, got.Truncated())
				}
			}
		}
	}
}

func TestParseShebang(t *testing.T) {
	for _, tc := range []struct{ in, interp, arg string }{
		{"#!/bin/sh\necho", "/bin/sh", ""},
		{"#! /bin/sh -e \n", "/bin/sh", "-e"},
		{"#!/usr/bin/env python3 -u\r\nx", "/usr/bin/env", "python3 -u"},
		{"#!\n", "", ""},
		{"echo hi\n", "", ""},
		{"#!/bin/bash", "/bin/bash", ""},
	} {
		interp, arg := parseShebang([]byte(tc.in))
		if interp != tc.interp || arg != tc.arg {
			t.Errorf("parseShebang(%q) = %q, %q; want %q, %q", tc.in, interp, arg, tc.interp, tc.arg)
		}
	}
}

func TestFallbackArgv(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/s"
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("#!/bin/sh -e\nexit 0\n")
	if got := fallbackArgv(p, []string{"a"}); !slices.Equal(got, []string{"/bin/sh", "-e", p, "a"}) {
		t.Errorf("got %q", got)
	}
	write("exit 0\n")
	if got := fallbackArgv(p, nil); !slices.Equal(got, []string{"/bin/sh", p}) {
		t.Errorf("got %q", got)
	}
}

func TestSanitizeCmd(t *testing.T) {
	if got := sanitizeCmd("a\nb\x00c\xffd"); got != "a?b?c?d" {
		t.Errorf("got %q", got)
	}
	long := sanitizeCmd(string(bytes.Repeat([]byte("x"), 2000)))
	if len(long) > 520 {
		t.Errorf("not bounded: %d", len(long))
	}
}
