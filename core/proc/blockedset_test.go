package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestBlockedSetRanks: after 2,000 decoys of the same kinds (creates in
// the home directory, writes to existing files elsewhere), the read of a
// secret store and the write of ~/.bashrc are kept and listed first; the
// decoys beyond the bound are counted by kind.
func TestBlockedSetRanks(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("k"), 0o600)
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("b"), 0o644)
	s := newBlockedSet()
	for i := range 1000 {
		f := filepath.Join(other, fmt.Sprint("w", i))
		os.WriteFile(f, nil, 0o644)
		s.add(Blocked{Kind: "write", Target: f})
		s.add(Blocked{Kind: "create", Target: filepath.Join(home, "decoys", fmt.Sprint("c", i))})
		s.add(Blocked{Kind: "create", Target: filepath.Join(home, "decoys", fmt.Sprint("c", i))}) // a repeat
	}
	secret, bashrc := filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(home, ".bashrc")
	s.add(Blocked{Kind: "read", Target: secret})
	s.add(Blocked{Kind: "write", Target: bashrc})
	s.add(Blocked{Kind: "write", Target: bashrc})
	list, dropped := s.list()
	if len(list) != 2*maxBlockedPerKind+1 {
		t.Fatalf("%d kept, want %d", len(list), 2*maxBlockedPerKind+1)
	}
	if list[0].Kind != "read" || list[0].Target != secret || list[1].Kind != "write" || list[1].Target != bashrc || list[1].Count != 2 {
		t.Fatalf("first two: %+v %+v", list[0], list[1])
	}
	if dropped["write"] != 1000-maxBlockedPerKind+1 || dropped["create"] != 1000-maxBlockedPerKind || len(dropped) != 2 {
		t.Fatalf("dropped %v", dropped)
	}
	for _, b := range list {
		if b.Kind == "create" && b.Count != 2 {
			t.Fatalf("a repeated create counted %d times", b.Count)
		}
	}
}
