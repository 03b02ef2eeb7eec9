package proc

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/seccomp/*.golden from the assembled filters")

// TestSeccompGolden pins each filter the script thread can get, as it is
// assembled for x86_64 and aarch64 behind the ABI guard, in
// testdata/seccomp/NAME.golden (regenerate with go test -run
// TestSeccompGolden -update ./core/proc/ and review the diff). A change of
// a policy, of the library's assembler, or of the foreign-ABI refusal
// shows here as a change of the program, call by call.
func TestSeccompGolden(t *testing.T) {
	type filter struct {
		name    string
		policy  func(a *arch.Info) seccomp.Policy
		foreign uint32
	}
	filters := []filter{
		{"notify", func(a *arch.Info) seccomp.Policy { return notifyPolicy(a, false) }, foreignAction(true, true)},
		{"notify-standins", func(a *arch.Info) seccomp.Policy { return notifyPolicy(a, true) }, foreignAction(true, true)},
		{"admin-watched", adminPolicy, foreignAction(false, true)},
		{"admin-unwatched", adminPolicy, foreignAction(false, false)},
		{"socket-net", func(a *arch.Info) seccomp.Policy { return socketPolicy(a, true, false) }, foreignAction(false, true)},
		{"socket-nonet-unwatched", func(a *arch.Info) seccomp.Policy { return socketPolicy(a, false, true) }, foreignAction(false, false)},
	}
	for _, a := range []*arch.Info{arch.X86_64, arch.AARCH64} {
		for _, f := range filters {
			name := a.Name + "-" + f.name
			t.Run(name, func(t *testing.T) {
				raw, err := assemble(f.policy(a), a, f.foreign)
				if err != nil {
					t.Fatal(err)
				}
				got := disassembleNamed(t, raw, a)
				file := filepath.Join("testdata", "seccomp", name+".golden")
				if *updateGolden {
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("%s changed (run with -update and review the diff):\n%s", file, firstDiff(string(want), got))
				}
			})
		}
	}
}

// disassembleNamed prints a program one instruction a line, naming the
// system call a comparison of seccomp_data.nr checks.
func disassembleNamed(t *testing.T, raw []bpf.RawInstruction, a *arch.Info) string {
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the program does not disassemble")
	}
	var b strings.Builder
	loadedNr := false
	for i, in := range insts {
		line := fmt.Sprint(in)
		if l, ok := in.(bpf.LoadAbsolute); ok {
			loadedNr = l.Off == 0
		}
		if j, ok := in.(bpf.JumpIf); ok && loadedNr && j.Cond == bpf.JumpEqual {
			if n, ok := a.SyscallNumbers[int(j.Val)]; ok {
				line += " ; " + n
			}
		}
		if r, ok := in.(bpf.RetConstant); ok {
			line += " ; " + retName(r.Val)
		}
		fmt.Fprintf(&b, "%3d %s\n", i, line)
	}
	return b.String()
}

func retName(v uint32) string {
	switch act := v & 0xffff0000; act {
	case 0x7fff0000:
		return "allow"
	case 0x7fc00000:
		return "notify"
	case 0x00050000:
		return fmt.Sprintf("errno %d", v&0xffff)
	case 0x80000000:
		return "kill process"
	default:
		return fmt.Sprintf("action %#x", act)
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d\nwant %q\n got %q", i+1, wl, gl)
		}
	}
	return ""
}
