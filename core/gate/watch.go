package gate

import (
	"github.com/diffgate/diffgate/core/report"
	"github.com/diffgate/diffgate/core/watch"
	"github.com/diffgate/diffgate/internal/quote"
)

// outsideAspect names each aspect of a change outside the workspace as the
// report does (report.Outside*).
var outsideAspect = map[watch.Aspect]string{
	watch.AspectType: report.OutsideType, watch.AspectMode: report.OutsideMode, watch.AspectOwner: report.OutsideOwner,
	watch.AspectTarget: report.OutsideTarget, watch.AspectSize: report.OutsideSize, watch.AspectMTime: report.OutsideMTime,
	watch.AspectCTime: report.OutsideCTime, watch.AspectInode: report.OutsideInode, watch.AspectLinks: report.OutsideLinks,
	watch.AspectDevice: report.OutsideDevice, watch.AspectStat: report.OutsideStat,
}

// WatchReport turns what a watch found (watch.Compare) into the report's
// watch and its changes outside the workspace; workspace is the watch's
// Options.Workspace (a path inside it was skipped because the diff covers
// it).
func WatchReport(s watch.Summary, changes []watch.Change, workspace string) (*report.Watch, []report.Outside) {
	w := &report.Watch{Paths: make([]report.WatchedPath, 0, len(s.Roots)), Entries: s.Entries}
	for _, r := range s.Roots {
		wp := report.WatchedPath{Path: r.Path.Path, Default: r.Default, Via: r.Via, For: r.For, Entries: r.Entries, Cut: r.Cut}
		switch {
		case r.SkippedIn == "":
		case r.SkippedIn == workspace:
			wp.Skipped = "inside the workspace: the diff covers it"
		default:
			wp.Skipped = "inside the gate's own directory " + quote.Path(r.SkippedIn)
		}
		w.Paths = append(w.Paths, wp)
	}
	for _, u := range s.Unwatchable {
		w.Unwatchable = append(w.Unwatchable, report.Unwatchable{Path: u.Path, Reason: u.Reason})
	}
	var out []report.Outside
	for _, c := range changes {
		as := make([]string, 0, len(c.Aspects))
		for _, a := range c.Aspects {
			as = append(as, outsideAspect[a])
		}
		out = append(out, report.Outside{Path: c.Path, Kind: c.Kind, Aspects: as, Before: c.Before, After: c.After})
	}
	return w, out
}
