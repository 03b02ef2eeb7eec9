package web

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/internal/oneline"
	"github.com/diffgate/diffgate/internal/quote"
)

// AllowlistFileName is the name the drafted allowlist downloads as.
const AllowlistFileName = "allowlist.txt"

// AllowlistFile is the drafted allowlist as a file for
// `diffgate run --allowlist FILE`: a comment header saying where it comes
// from and what verdict it gives, then one entry per line.
func AllowlistFile(source string, r *report.Report, entries []string) []byte {
	var b bytes.Buffer
	b.WriteString("# diffgate allowlist, drafted in the web review\n")
	if source != "" {
		fmt.Fprintf(&b, "# report: %s\n", quote.Path(source))
	}
	if r != nil {
		if r.Workspace != "" {
			fmt.Fprintf(&b, "# workspace: %s\n", quote.Path(r.Workspace))
		}
		v := strings.ToUpper(r.Verdict)
		if len(r.Reasons) > 0 {
			v += " (" + oneline.Flat(strings.Join(r.Reasons, ", ")) + ")"
		}
		fmt.Fprintf(&b, "# verdict with this allowlist: %s\n", v)
	}
	b.WriteString("# use: diffgate run --allowlist allowlist.txt ...\n")
	for _, e := range entries {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
