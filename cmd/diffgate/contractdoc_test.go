package main

// These tests read docs/contract.md, the contract versioned with the code:
// the shared contract copied whole (its lines never altered) and the
// repository's marked extensions after it. The behaviour each line states
// is pinned by contract_test.go and the tests it names; here the document
// itself is held to the code.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/report"
)

const (
	contractDoc = "../../docs/contract.md"
	// extMarker starts the line that ends the shared contract's text.
	extMarker = "<!-- diffgate-contract: extensions below."
	// sharedContractSHA256 is the SHA-256 of the shared contract
	// (/work/shared/contract.md) as copied: its lines are never altered,
	// only extended below the marker.
	sharedContractSHA256 = "0ba807cc23cdab18d1770161cdf5fcf6398e4f7fc45a4f3e57e11cf68bfb7f7e"
)

// contractGaps are the contract's verbs this repository does not have yet;
// docs/contract.md says so ("Not implemented", E1).
var contractGaps [][]string

func readContract(t *testing.T) (whole, original string) {
	t.Helper()
	data, err := os.ReadFile(contractDoc)
	if err != nil {
		t.Fatal(err)
	}
	whole = string(data)
	i := strings.Index(whole, "\n"+extMarker)
	if i < 0 {
		t.Fatalf("%s: no line starting %q after the shared contract", contractDoc, extMarker)
	}
	return whole, whole[:i]
}

// TestContractDocumentOriginalUnaltered: the shared contract's text is in
// docs/contract.md byte for byte, above the extensions; and, where this
// checkout has the shared copy beside it (../shared, as the Makefile's
// FRESH_MACHINE assumes), it is that copy.
func TestContractDocumentOriginalUnaltered(t *testing.T) {
	_, original := readContract(t)
	sum := sha256.Sum256([]byte(original))
	if got := hex.EncodeToString(sum[:]); got != sharedContractSHA256 {
		t.Errorf("the shared contract's lines in %s were altered (sha256 %s, want %s): extend it below the marker, never edit above it", contractDoc, got, sharedContractSHA256)
	}
	if shared, err := os.ReadFile("../../../shared/contract.md"); err == nil && string(shared) != original {
		t.Errorf("../shared/contract.md differs from the copy in %s: copy it whole above the marker and update sharedContractSHA256", contractDoc)
	} else if err != nil {
		t.Logf("no shared copy beside the checkout (%v): the pinned hash alone holds the text", err)
	}
}

// synopsis is one "diffgate ..." line of a code block (with its
// continuation lines): the verb path and the flags it names.
type synopsis struct {
	line  string
	verb  []string
	flags []string
}

var (
	fenceRe = regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```")
	verbRe  = regexp.MustCompile(`^[a-z]+$`)
	flagRe  = regexp.MustCompile(`(?:^|[\s\[|])(--?[a-z][a-z-]*)`)
)

func contractSynopses(doc string) []synopsis {
	var out []synopsis
	for _, m := range fenceRe.FindAllStringSubmatch(doc, -1) {
		if m[1] != "" { // json, yaml, sh: examples, not synopses
			continue
		}
		for _, l := range strings.Split(m[2], "\n") {
			if i := strings.Index(l, "#"); i >= 0 {
				l = l[:i]
			}
			switch {
			case strings.HasPrefix(l, "diffgate "):
				s := synopsis{line: strings.TrimSpace(l)}
				f := strings.Fields(l)[1:]
				for len(f) > 0 && verbRe.MatchString(f[0]) {
					s.verb, f = append(s.verb, f[0]), f[1:]
				}
				out = append(out, s)
			case strings.TrimSpace(l) == "" || len(out) == 0 || !strings.HasPrefix(l, " "):
				continue
			default:
				out[len(out)-1].line += " " + strings.TrimSpace(l)
			}
			s := &out[len(out)-1]
			s.flags = nil
			for _, fm := range flagRe.FindAllStringSubmatch(s.line, -1) {
				s.flags = append(s.flags, fm[1])
			}
		}
	}
	return out
}

// TestContractDocumentSynopses: every verb of docs/contract.md's synopses
// (the shared contract's and the extensions') exists and its -h names every
// flag the synopsis names; a verb the document lists as not implemented is
// still absent (implementing it means updating the document).
func TestContractDocumentSynopses(t *testing.T) {
	whole, _ := readContract(t)
	syn := contractSynopses(whole)
	if len(syn) < 15 {
		t.Fatalf("%s: only %d synopses found", contractDoc, len(syn))
	}
	for _, s := range syn {
		if len(s.verb) == 0 { // diffgate --version
			for _, f := range s.flags {
				if code, out, errs := cliRun(t, f); code != 0 {
					t.Errorf("%s: diffgate %s: exit %d %q %q", s.line, f, code, out, errs)
				}
			}
			continue
		}
		code, help, errs := cliRun(t, append(slices.Clone(s.verb), "-h")...)
		if slices.ContainsFunc(contractGaps, func(g []string) bool { return slices.Equal(g, s.verb) }) {
			if code == 0 {
				t.Errorf("diffgate %s now exists: say so in %s (E1) and drop it from contractGaps", strings.Join(s.verb, " "), contractDoc)
			} else if !strings.Contains(whole, "`diffgate "+strings.Join(s.verb, " ")+"`") {
				t.Errorf("%s does not name the missing `diffgate %s`", contractDoc, strings.Join(s.verb, " "))
			}
			continue
		}
		if code != 0 || !strings.HasPrefix(help, "usage:\n  diffgate "+strings.Join(s.verb, " ")) {
			t.Errorf("%s: diffgate %s -h: exit %d stdout %q stderr %q", s.line, strings.Join(s.verb, " "), code, help, errs)
			continue
		}
		for _, f := range s.flags {
			if !regexp.MustCompile(`(?m)(^|[\s\[|])` + regexp.QuoteMeta(f) + `($|[\s\]=|])`).MatchString(help) {
				t.Errorf("%s: diffgate %s -h does not name %s:\n%s", s.line, strings.Join(s.verb, " "), f, help)
			}
		}
	}
}

// jsonKeys lists the key paths of a JSON value: "process.leftovers[].pid".
func jsonKeys(prefix string, v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			into[p] = true
			jsonKeys(p, x, into)
		}
	case []any:
		for _, x := range v {
			jsonKeys(prefix+"[]", x, into)
		}
	}
}

// TestContractDocumentJSONFields: every field of docs/contract.md's JSON
// examples (the shared contract's report and the extensions' one) is a
// field of the report model: it survives report.Parse and WriteJSON.
func TestContractDocumentJSONFields(t *testing.T) {
	whole, _ := readContract(t)
	n := 0
	for _, m := range fenceRe.FindAllStringSubmatch(whole, -1) {
		if m[1] != "json" {
			continue
		}
		n++
		// The shared contract's example has placeholders for its times.
		text := strings.ReplaceAll(m[2], `"RFC 3339"`, `"2026-12-02T01:02:03Z"`)
		var doc any
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			t.Errorf("JSON example %d is not JSON: %v", n, err)
			continue
		}
		r, err := report.Parse([]byte(text))
		if err != nil {
			t.Errorf("JSON example %d: %v", n, err)
			continue
		}
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var back any
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		want, got := map[string]bool{}, map[string]bool{}
		jsonKeys("", doc, want)
		jsonKeys("", back, got)
		var lost []string
		for k := range want {
			if !got[k] {
				lost = append(lost, k)
			}
		}
		sort.Strings(lost)
		if len(lost) > 0 {
			t.Errorf("JSON example %d names fields the report does not keep: %s\nwritten back:\n%s", n, strings.Join(lost, ", "), buf.String())
		}
	}
	if n < 2 {
		t.Errorf("%s: %d JSON examples, want the contract's and the extensions'", contractDoc, n)
	}
}

// TestContractDocumentDiffNotes: every diff_note value the code writes is
// named in the extensions' diff_note line, so a new note (keep-budget was
// one) fails here until docs/contract.md lists it.
func TestContractDocumentDiffNotes(t *testing.T) {
	whole, original := readContract(t)
	ext := whole[len(original):]
	i := strings.Index(ext, "- `diff_note` is one of")
	if i < 0 {
		t.Fatalf("%s: the extensions have no line \"- `diff_note` is one of\"", contractDoc)
	}
	line, _, _ := strings.Cut(ext[i:], "\n- ")
	for _, n := range []string{diff.NoteBinary, diff.NoteTooLarge, diff.NoteNotKept, diff.NoteBudget, diff.NoteKeepBudget} {
		if !strings.Contains(line, "`"+n+"`") {
			t.Errorf("%s: the diff_note extension does not name `%s`", contractDoc, n)
		}
	}
}
