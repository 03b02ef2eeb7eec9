package report

import (
	"fmt"

	"github.com/diffgate/diffgate/core/diff"
	"github.com/diffgate/diffgate/core/textdiff"
)

// DiffNoteText explains a change's diff_note (diff.Note*) in a few words,
// e.g. "no text diff: binary content"; "" for no note.
func DiffNoteText(note string) string {
	switch note {
	case "":
		return ""
	case diff.NoteBinary:
		return "no text diff: binary content"
	case diff.NoteTooLarge:
		return fmt.Sprintf("no text diff: over the %d KiB limit for kept copies (a staged run diffs files up to %d MiB)", textdiff.MaxInput>>10, textdiff.MaxFullInput>>20)
	case diff.NoteNotKept:
		return "no text diff: the before-content was not kept"
	case diff.NoteBudget:
		return "no text diff: past the run's budget for text diffs, which violations and edits of existing files get first (report.RankOrder)"
	case diff.NoteKeepBudget:
		return "no text diff: before-content not kept: the workspace's text exceeds the keep budget (64 MiB a run, source files first; 256 MiB in the history, DIFFGATE_TEXT_BUDGET); use --stage for every diff"
	}
	return "no text diff: " + note
}
