//go:build unix

package report

import (
	"fmt"
	"testing"

	"github.com/diffgate/diffgate/internal/browsertest"
)

// foldState is what a fold shows in the browser: the height of its body
// (0 when closed), its marker, and whether its checkbox is checked.
type foldState struct {
	Height  float64
	Mark    string
	Checked bool
}

// foldOf reads the fold whose checkbox has id.
func foldOf(tab *browsertest.Tab, id string) foldState {
	return browsertest.Eval[foldState](tab, fmt.Sprintf(`(() => {
		const on = document.getElementById(%q), f = on.parentElement;
		return {Height: f.querySelector(".fold-body").getBoundingClientRect().height,
			Mark: getComputedStyle(f.querySelector(".fold-mark"), "::before").content,
			Checked: on.checked};
	})()`, id))
}

// centre returns the middle of the first element that selector matches,
// scrolled into view.
func centre(tab *browsertest.Tab, selector string) (x, y float64) {
	p := browsertest.Eval[[2]float64](tab, fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2];
	})()`, selector))
	return p[0], p[1]
}

// A change's metadata and text diff are folds (no <details>): a violation's
// diff starts open, the rest closed; a click on the label or Space on the
// focused checkbox opens and closes one, the marker says which; the text
// of a closed one is there for the browser's find in page, which opens it
// by dropping its hidden attribute (simulated here), and a click closes it
// again; where hidden="until-found" is plain hidden, a click still opens
// one.
func TestBrowserFolds(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.TabOptions{Width: 1200, Height: 900})
	tab.Navigate("file://" + writePage(t, fixtureReport()))
	const open, closed = `"▾"`, `"▸"`
	want := func(what, id string, opened bool) {
		t.Helper()
		s := foldOf(tab, id)
		if opened && (s.Height < 20 || s.Mark != open) || !opened && (s.Height != 0 || s.Mark != closed) {
			t.Errorf("%s: %s is %+v, want open %v", what, id, s, opened)
		}
	}
	ids := browsertest.Eval[[]string](tab, `Array.from(document.querySelectorAll(".fold-on")).map(e => e.id)`)
	if len(ids) < 4 {
		t.Fatalf("%d folds", len(ids))
	}
	diff := browsertest.Eval[string](tab, `document.querySelector(".fold.textdiff .fold-on:checked").id`)
	meta := browsertest.Eval[string](tab, `document.querySelector(".fold.meta .fold-on").id`)
	want("at load", diff, true)
	want("at load", meta, false)
	for i, id := range ids {
		if s := foldOf(tab, id); s.Checked != (s.Height > 0) {
			t.Errorf("at load: fold %d (%s) is %+v", i, id, s)
		}
	}

	tab.Click(centre(tab, "label[for='"+meta+"']"))
	tab.NextFrame()
	want("after a click", meta, true)
	tab.Click(centre(tab, "label[for='"+diff+"']"))
	tab.NextFrame()
	want("after a click", diff, false)

	browsertest.Eval[bool](tab, fmt.Sprintf(`(document.getElementById(%q).focus(), true)`, diff))
	tab.Press(" ")
	tab.NextFrame()
	want("after Space", diff, true)

	// Find in page opens a closed fold by dropping hidden="until-found".
	tab.Click(centre(tab, "label[for='"+meta+"']"))
	tab.NextFrame()
	want("closed again", meta, false)
	browsertest.Eval[bool](tab, fmt.Sprintf(`(document.getElementById(%q).parentElement.querySelector(".fold-body").removeAttribute("hidden"), true)`, meta))
	tab.NextFrame()
	want("found", meta, true)
	tab.Click(centre(tab, "label[for='"+meta+"']"))
	tab.NextFrame()
	want("found, then clicked", meta, false)

	// A browser without until-found takes the attribute for plain hidden
	// (display: none): a checked box opens the fold there too.
	other := browsertest.Eval[string](tab, `document.querySelector(".fold.textdiff .fold-on:not(:checked)").id`)
	browsertest.Eval[bool](tab, fmt.Sprintf(`(document.getElementById(%q).parentElement.querySelector(".fold-body").setAttribute("hidden", ""), true)`, other))
	tab.NextFrame()
	want("plain hidden", other, false)
	tab.Click(centre(tab, "label[for='"+other+"']"))
	tab.NextFrame()
	if s := foldOf(tab, other); s.Height < 20 || !s.Checked {
		t.Errorf("plain hidden, after a click: %s is %+v, want open", other, s)
	}
	if p := tab.Problems(); len(p) > 0 {
		t.Errorf("the page: %v", p)
	}
}

// The filters hide the changes of a kind, detailed or brief (past
// htmlDetailed, one row each), and the allowed changes, and show them
// again.
func TestBrowserFilters(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.TabOptions{Width: 1200, Height: 900})
	tab.Navigate("file://" + writePage(t, flatRun(htmlDetailed+40, 2)))
	type counts struct{ Added, Changed, Brief, Allowed int }
	shown := func() counts {
		return browsertest.Eval[counts](tab, `(() => {
			const n = s => Array.from(document.querySelectorAll(s)).filter(e => e.checkVisibility()).length;
			return {Added: n("tr.row.added"), Changed: n("tr.row.changed"), Brief: n("tbody.brief tr.row"),
				Allowed: document.getElementById("allowed").checkVisibility() ? 1 : 0};
		})()`)
	}
	all := shown()
	if all.Added != htmlDetailed+38 || all.Changed != 2 || all.Brief != 40 || all.Allowed != 1 {
		t.Fatalf("at load: %+v", all)
	}
	tab.Click(centre(tab, "label[for='f-added']"))
	tab.NextFrame()
	if s := shown(); s != (counts{Changed: 2, Allowed: 1}) {
		t.Errorf("added filtered out: %+v", s)
	}
	tab.Click(centre(tab, "label[for='f-added']"))
	tab.Click(centre(tab, "label[for='f-changed']"))
	tab.NextFrame()
	if s := shown(); s != (counts{Added: all.Added, Brief: all.Brief, Allowed: 1}) {
		t.Errorf("changed filtered out: %+v", s)
	}
	tab.Click(centre(tab, "label[for='f-changed']"))
	tab.Click(centre(tab, "label[for='f-allowed']"))
	tab.NextFrame()
	if s := shown(); s != (counts{Changed: 2}) {
		t.Errorf("allowed filtered out: %+v", s)
	}
	tab.Click(centre(tab, "label[for='f-allowed']"))
	tab.NextFrame()
	if s := shown(); s != all {
		t.Errorf("all shown again: %+v, want %+v", s, all)
	}
}
