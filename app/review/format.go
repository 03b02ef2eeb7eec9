package review

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/diffgate/diffgate/core/report"
)

// Format is an export format of a report.
type Format string

// Export formats, named by their file extension.
const (
	HTML     Format = "html"
	Markdown Format = "md"
	JSON     Format = "json"
)

// formats lists the export formats in button order.
var formats = []Format{HTML, Markdown, JSON}

// Label is the format's name on a button.
func (f Format) Label() string {
	switch f {
	case HTML:
		return "HTML"
	case Markdown:
		return "Markdown"
	case JSON:
		return "JSON"
	}
	return strings.ToUpper(string(f))
}

// FileName suggests a file name for r in this format, e.g.
// "diffgate-demo-workspace-20260914-102103.html".
func (f Format) FileName(r *report.Report) string {
	base := "diffgate-report"
	if r != nil && r.Workspace != "" {
		base = "diffgate-" + filepath.Base(r.Workspace)
	}
	if r != nil && !r.StartedAt.IsZero() {
		base += "-" + r.StartedAt.Format("20060102-150405")
	}
	return base + "." + string(f)
}

// writer returns r's writer for the format, or nil when this build of the
// report package has none.
func (f Format) writer(r *report.Report) func(io.Writer) error {
	var x any = r
	switch f {
	case JSON:
		return r.WriteJSON
	case HTML:
		if w, ok := x.(interface{ WriteHTML(io.Writer) error }); ok {
			return w.WriteHTML
		}
	case Markdown:
		if w, ok := x.(interface{ WriteMarkdown(io.Writer) error }); ok {
			return w.WriteMarkdown
		}
	}
	return nil
}

// available reports whether the format can be written.
func (f Format) available() bool { return f.writer(&report.Report{}) != nil }

// Write writes r in the format to w.
func (f Format) Write(r *report.Report, w io.Writer) error {
	fn := f.writer(r)
	if fn == nil {
		return fmt.Errorf("%s export is not available in this build", f.Label())
	}
	return fn(w)
}
