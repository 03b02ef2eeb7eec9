package oneline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
)

func TestText(t *testing.T) {
	if got := First("one\r\ntwo"); got != "one" {
		t.Errorf("First %q", got)
	}
	if got := Flat("  exec: \"x\":\n\tnot found  "); got != `exec: "x": not found` {
		t.Errorf("Flat %q", got)
	}
	_, err := os.Open("/nonexistent/x")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{err, "no such file or directory"},
		{fmt.Errorf("read: %w", &fs.PathError{Op: "open", Path: "/p", Err: fs.ErrPermission}), "permission denied"},
		{errors.New("bad\nsecond line"), "bad"},
	} {
		if got := Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
