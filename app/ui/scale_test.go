package ui

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestViewedMarksKeptInTheHistory: a mark made in the review of a run is
// saved with the run; reopening the run from the history, in this app or
// another one on the same database, restores it.
func TestViewedMarksKeptInTheHistory(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "history.db")
	u, l, _ := newTestUI(t, Options{DBPath: dbPath})
	r := runScript(t, u, l, workspace(t), "echo x > new1\necho y > new2\nrm b.txt\n", nil)
	id := u.reviewID
	if id == 0 || len(r.Changes) != 3 {
		t.Fatalf("run %d with %d changes", id, len(r.Changes))
	}
	v := u.Review()
	for i, c := range r.Changes {
		if c.Path == "new2" {
			v.Select(i)
		}
	}
	if !v.TypedRune('v') {
		t.Fatal("the view did not take the viewed key")
	}
	if s := reviewedText(v); s != "1 of 3 reviewed" {
		t.Fatalf("%q", s)
	}
	l.until(t, "the mark to be saved", 15*time.Second, func() bool {
		m, err := u.hist.Viewed(id)
		return err == nil && slices.Equal(m, []string{"new2"})
	})

	openReport(t, u, l, writeDemoReport(t)) // another report: no marks
	if s := reviewedText(v); s != "0 of 7 reviewed" {
		t.Errorf("the demo report: %q", s)
	}
	reopen(t, u, l, id)
	if s := reviewedText(v); !strings.HasPrefix(s, "1 of ") || !slices.Equal(v.Viewed(), []string{"new2"}) {
		t.Errorf("reopened: %q, %q", s, v.Viewed())
	}
	u2, l2, _ := newTestUI(t, Options{DBPath: dbPath})
	reopen(t, u2, l2, id)
	if got := u2.Review().Viewed(); !slices.Equal(got, []string{"new2"}) {
		t.Errorf("another app: marks %q", got)
	}
}

// TestNewRunClearsTheFilters: a filter set in one review does not hide the
// changes of the next run or report.
func TestNewRunClearsTheFilters(t *testing.T) {
	u, l, _ := newTestUI(t, Options{})
	openReport(t, u, l, writeDemoReport(t))
	v := u.Review()
	all := v.Filter() // a report opens with every change shown
	hide := all
	hide.Added, hide.Text = false, "config"
	v.SetFilter(hide)
	if hiddenText(v) == "" {
		t.Fatal("the filter hides nothing")
	}
	runScript(t, u, l, workspace(t), "echo x > new1\necho 'debug = true' > config.ini\n", nil)
	if v.Filter() != all || hiddenText(v) != "" || reviewedText(v) != "0 of 2 reviewed" {
		t.Errorf("after a new run: filter %+v, %q, %q", v.Filter(), hiddenText(v), reviewedText(v))
	}
	v.SetFilter(hide)
	openReport(t, u, l, writeDemoReport(t))
	if v.Filter() != all || hiddenText(v) != "" || reviewedText(v) != "0 of 7 reviewed" {
		t.Errorf("after opening a report: filter %+v, %q, %q", v.Filter(), hiddenText(v), reviewedText(v))
	}
}
