//go:build !js

package history

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

type text struct {
	sha  string
	data []byte
}

func newText(n int) text {
	b := make([]byte, n/2)
	rand.Read(b)
	data := []byte(hex.EncodeToString(b))
	s := sha256.Sum256(data)
	return text{hex.EncodeToString(s[:]), data}
}

func texts(ts ...text) func(func(string, []byte) bool) {
	return func(yield func(string, []byte) bool) {
		for _, t := range ts {
			if !yield(t.sha, t.data) {
				return
			}
		}
	}
}

// TestTextStoreDedupAndLRU: a repeated store adds only what is new; past
// the budget the least recently used copies go (a lookup counts as a use);
// a copy under a wrong hash or over MaxText is never stored.
func TestTextStoreDedupAndLRU(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "h.db"), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	const ws = "/ws"
	if _, err := db.Text(ctx, ws, newText(10).sha); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty store: %v", err)
	}
	a, b, c, d := newText(2000), newText(20000), newText(2000), newText(100)
	keep := func(used []string, budget int64, ts ...text) TextStats {
		t.Helper()
		st, err := db.KeepTexts(ctx, ws, texts(ts...), nil, used, budget)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	big := int64(1 << 30)
	if st := keep(nil, big, a); st.Added != 1 {
		t.Fatalf("first store: %+v", st)
	}
	st := keep(nil, big, a, b)
	if st.Added != 1 {
		t.Errorf("a repeated store added %d, want only the new one", st.Added)
	}
	sizeB := st.AddedBytes
	wrong := text{a.sha, []byte("not a's content")}
	huge := newText(MaxText + 2)
	st = keep([]string{a.sha}, big, c, wrong, huge)
	if st.Added != 1 {
		t.Errorf("added %d, want c only (wrong hash and over MaxText refused)", st.Added)
	}
	if got, err := db.Text(ctx, ws, a.sha); err != nil || string(got) != string(a.data) {
		t.Fatalf("a: %v", err)
	}
	if _, err := db.Text(ctx, "/other", a.sha); !errors.Is(err, ErrNotFound) {
		t.Errorf("another workspace's store: %v", err)
	}
	// b is the least recently used (a was used by the last run): a budget
	// that holds all but b evicts b alone.
	budget := st.Total - sizeB + int64(len(d.data))
	st = keep(nil, budget, d)
	if st.Evicted != 1 || st.Total > budget {
		t.Fatalf("eviction: %+v (budget %d)", st, budget)
	}
	if _, err := db.Text(ctx, ws, b.sha); !errors.Is(err, ErrNotFound) {
		t.Errorf("b was not evicted: %v", err)
	}
	if !db.TextMissed(ctx, ws, b.sha) || db.TextMissed(ctx, ws, a.sha) {
		t.Error("an evicted copy is not remembered as missed for the budget (or a kept one is)")
	}
	for _, x := range []text{a, c, d} {
		if _, err := db.Text(ctx, ws, x.sha); err != nil {
			t.Errorf("evicted the wrong copy: %v", err)
		}
	}
	// A zero budget keeps nothing.
	if st := keep(nil, 0, newText(50)); st.Added != 0 || st.Total != 0 {
		t.Errorf("zero budget: %+v", st)
	}
}

func TestTextBudgetFromEnvironment(t *testing.T) {
	for v, want := range map[string]int64{"": DefaultTextBudget, "1024": 1024, "8K": 8 << 10, "64m": 64 << 20, "1G": 1 << 30, "0": 0} {
		t.Setenv(EnvTextBudget, v)
		if got, err := TextBudget(); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"x", "-1", "12T", "M"} {
		t.Setenv(EnvTextBudget, v)
		if _, err := TextBudget(); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}

// TestTextStoreRemembersBudgetMisses: a content a run could not keep for its
// budget is missed for the budget until a later run stores it.
func TestTextStoreRemembersBudgetMisses(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "h.db"), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	x := newText(100)
	over := func(yield func(string) bool) { yield(x.sha) }
	if _, err := db.KeepTexts(ctx, "/ws", nil, over, nil, 1<<20); err != nil {
		t.Fatal(err)
	}
	if !db.TextMissed(ctx, "/ws", x.sha) || db.TextMissed(ctx, "/other", x.sha) {
		t.Fatal("budget miss not remembered for its workspace")
	}
	if _, err := db.KeepTexts(ctx, "/ws", texts(x), nil, nil, 1<<20); err != nil {
		t.Fatal(err)
	}
	if db.TextMissed(ctx, "/ws", x.sha) {
		t.Error("still missed once stored")
	}
}

// TestTextStoreTotal: the store's byte total is kept with it (no sum over
// the store on each run), follows adds and evictions, and is summed again
// when a diffgate that keeps no total wrote the store (its clock moved).
func TestTextStoreTotal(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "h.db"))
	ctx := context.Background()
	const ws = "/ws"
	sum := func() int64 {
		var n int64
		db.sql.QueryRow("SELECT coalesce(sum(stored), 0) FROM text_store WHERE workspace = ?", blob(ws)).Scan(&n)
		return n
	}
	for i, ts := range [][]text{{newText(2000), newText(3000)}, {newText(4000)}, {newText(30000)}} {
		st, err := db.KeepTexts(ctx, ws, texts(ts...), nil, nil, 20000)
		if err != nil {
			t.Fatal(err)
		}
		if st.Total != sum() || st.Total > 20000 {
			t.Fatalf("keep %d: total %d, the store holds %d (budget 20000)", i, st.Total, sum())
		}
	}
	// Another writer, as an older diffgate: a row at a later clock.
	x := newText(1000)
	if _, err := db.sql.Exec(`INSERT INTO text_store (workspace, sha256, size, stored, encoding, data, used)
		SELECT ?1, ?2, 1000, 1000, 'raw', ?3, max(used) + 1 FROM text_store WHERE workspace = ?1`, blob(ws), x.sha, x.data); err != nil {
		t.Fatal(err)
	}
	st, err := db.KeepTexts(ctx, ws, texts(newText(500)), nil, nil, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != sum() {
		t.Fatalf("after another writer: total %d, the store holds %d", st.Total, sum())
	}
}
