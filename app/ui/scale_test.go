package ui

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/diffgate/diffgate/app/review"
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
	if !v.TypedRune(review.ViewedKey) {
		t.Fatal("the view did not take the viewed key")
	}
	if n, total := v.Reviewed(); n != 1 || total != 3 {
		t.Fatalf("%d of %d reviewed", n, total)
	}
	l.until(t, "the mark to be saved", 15*time.Second, func() bool {
		m, err := u.hist.Viewed(id)
		return err == nil && slices.Equal(m, []string{"new2"})
	})

	openReport(t, u, l, writeDemoReport(t)) // another report: no marks
	if n, total := v.Reviewed(); n != 0 || total != 7 {
		t.Errorf("the demo report: %d of %d reviewed", n, total)
	}
	reopen(t, u, l, id)
	if n, _ := v.Reviewed(); n != 1 || !slices.Equal(v.Viewed(), []string{"new2"}) {
		t.Errorf("reopened: %d reviewed, %q", n, v.Viewed())
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
	hide := review.DefaultFilter()
	hide.Added, hide.Text = false, "config"
	v.SetFilter(hide)
	if v.HiddenByFilter() == 0 {
		t.Fatal("the filter hides nothing")
	}
	runScript(t, u, l, workspace(t), "echo x > new1\necho 'debug = true' > config.ini\n", nil)
	if v.Filter() != review.DefaultFilter() || v.HiddenByFilter() != 0 || len(v.Shown()) != 2 {
		t.Errorf("after a new run: filter %+v, %d hidden, %d shown", v.Filter(), v.HiddenByFilter(), len(v.Shown()))
	}
	v.SetFilter(hide)
	openReport(t, u, l, writeDemoReport(t))
	if v.Filter() != review.DefaultFilter() || len(v.Shown()) != 7 {
		t.Errorf("after opening a report: filter %+v, %d shown", v.Filter(), len(v.Shown()))
	}
}
