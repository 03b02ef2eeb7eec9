//go:build !js

package history

import (
	"errors"
	"reflect"
	"testing"
)

// TestViewedMarks: marks are kept per run, only for the run's changes,
// odd paths included; clearing removes them; they survive a reopen and
// stay out of the hash chain; deleting the run deletes them.
func TestViewedMarks(t *testing.T) {
	db, path := tempDB(t)
	rec := func() int64 {
		id, err := db.Record(ctx, &Run{Report: oddReport("/ws")}, sampleContents, nil)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	id, other := rec(), rec()
	if got, err := db.Viewed(ctx, id); err != nil || len(got) != 0 {
		t.Fatalf("a new run has marks %q, %v", got, err)
	}
	nl, bad := "dir/new\nline.txt", "bad\xff\xfename"
	if err := db.SetViewed(ctx, id, []string{nl, bad, "not/a/change", "suid"}, true); err != nil {
		t.Fatal(err)
	}
	if err := db.SetViewed(ctx, id, []string{nl}, true); err != nil { // again: no duplicate
		t.Fatal(err)
	}
	want := []string{bad, nl, "suid"}
	if got, err := db.Viewed(ctx, id); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("marks %q, %v; want %q", got, err, want)
	}
	if got, _ := db.Viewed(ctx, other); len(got) != 0 {
		t.Errorf("the other run has marks %q", got)
	}
	if err := db.SetViewed(ctx, id, []string{"suid"}, false); err != nil {
		t.Fatal(err)
	}
	if b, err := db.Verify(ctx); b != nil || err != nil {
		t.Errorf("verify with marks: %+v, %v", b, err)
	}
	db.Close()
	db = openTest(t, path)
	if got, _ := db.Viewed(ctx, id); !reflect.DeepEqual(got, []string{bad, nl}) {
		t.Errorf("after a reopen: marks %q", got)
	}
	if err := db.SetViewed(ctx, 99, []string{"x"}, true); !errors.Is(err, ErrNotFound) {
		t.Errorf("marks on an unknown run: %v", err)
	}
	if _, err := db.sql.Exec("DELETE FROM changes WHERE run_id = ?", id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec("DELETE FROM runs WHERE id = ?", id); err != nil {
		t.Fatal(err)
	}
	var n int
	db.sql.QueryRow("SELECT count(*) FROM viewed").Scan(&n)
	if n != 0 {
		t.Errorf("%d marks left after the run was deleted", n)
	}
}
