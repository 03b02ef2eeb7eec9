package textdiff

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/diffgate/diffgate/internal/testenv"
)

// bigText is n numbered lines of 52 bytes (n = 110,000: 5.5 MiB).
func bigText(n int) []byte { return []byte(testenv.NumberedLines(n)) }

// A 5.4 MiB file with one changed line: the diff shows that line, numbered.
func TestFullDiffLargeFile(t *testing.T) {
	before := bigText(110_000)
	after := []byte(strings.Replace(string(before), "0061234 the quick brown fox", "0061234 the QUICK brown fox", 1))
	if len(before) < 5<<20 {
		t.Fatalf("%d bytes", len(before))
	}
	if _, ok := Lines(before, after, "big.txt"); ok {
		t.Fatal("Lines took a 5 MiB file")
	}
	start := time.Now()
	d, hunks, err := Full(context.Background(), before, after, "big.txt", 500, 0)
	t.Logf("full diff of 2 x %d bytes in %v", len(before), time.Since(start))
	if err != nil || hunks != 1 {
		t.Fatalf("hunks %d, err %v", hunks, err)
	}
	want := "--- a/big.txt\n+++ b/big.txt\n@@ -61232,7 +61232,7 @@\n 0061231 the quick brown fox jumps over the lazy dog\n"
	if !strings.HasPrefix(d, want) || !strings.Contains(d, "\n-0061234 the quick brown fox") || !strings.Contains(d, "\n+0061234 the QUICK brown fox") {
		t.Errorf("diff:\n%s", d)
	}
}

// Only the first hunks are kept, and a cut line says how many are left out;
// a byte bound cuts further and still says so in one line.
func TestFullDiffFirstHunks(t *testing.T) {
	before := bigText(10_000)
	after := []byte(strings.ReplaceAll(string(before), "00 the quick", "00 a quick")) // lines 0, 100, 200, ...: 100 hunks
	d, hunks, err := Full(context.Background(), before, after, "f.txt", 20, 0)
	if err != nil || hunks != 100 {
		t.Fatalf("hunks %d, err %v", hunks, err)
	}
	if n := strings.Count(d, "\n@@ "); n != 20 {
		t.Errorf("%d hunks shown, want 20", n)
	}
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "… cut: 80 more hunks not shown (") {
		t.Errorf("last line %q", last)
	}
	added, removed, partial := Counts(d)
	if added != 20 || removed != 20 || !partial {
		t.Errorf("counts +%d -%d partial %v", added, removed, partial)
	}

	d, _, _ = Full(context.Background(), before, after, "f.txt", 20, 2<<10)
	lines = strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	shown := strings.Count(d, "\n@@ ")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, fmt.Sprintf("… cut: %d more hunks not shown (", 100-shown)) || strings.Count(d, "… cut:") != 1 {
		t.Errorf("%d hunks shown, cut lines:\n%s", shown, d)
	}
	if len(d) > 3<<10 {
		t.Errorf("%d bytes, bound about 2 KiB", len(d))
	}
}

func TestFullDiffRefuses(t *testing.T) {
	if _, _, err := Full(context.Background(), []byte("a\x00b"), []byte("c"), "x", 0, 0); !errors.Is(err, ErrNotText) {
		t.Errorf("binary: %v", err)
	}
	if _, _, err := Full(context.Background(), make([]byte, MaxFullInput+1), nil, "x", 0, 0); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("too large: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Full(ctx, bigText(10), bigText(11), "x", 0, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if d, n, err := Full(context.Background(), []byte("same\n"), []byte("same\n"), "x", 0, 0); d != "" || n != 0 || err != nil {
		t.Errorf("identical: %q %d %v", d, n, err)
	}
}

// The LCS search stops after 50 differences; a file with more shows each
// of them, not one block replacing everything after the 50th.
func TestTextDiffManyEdits(t *testing.T) {
	before := bigText(3000)
	after := []byte(strings.ReplaceAll(string(before), "0 the quick", "0 a quick")) // every 10th line: 300 edits
	d, ok := Lines(before, after, "f.txt")
	if !ok {
		t.Fatal("no diff")
	}
	full, hunks, err := Full(context.Background(), before, after, "f.txt", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	added, removed, _ := Counts(full)
	if added != 300 || removed != 300 {
		t.Errorf("full diff: +%d −%d in %d hunks, want +300 −300", added, removed, hunks)
	}
	if !strings.HasPrefix(full, d[:strings.LastIndex(d[:len(d)-1], "\n@@")]) {
		t.Error("Lines' hunks are not the full diff's first")
	}
	if added, removed, _ := Counts(d); added != removed || added < 30 {
		t.Errorf("Lines: +%d −%d", added, removed)
	}
}
