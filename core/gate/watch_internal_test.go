package gate

import (
	"testing"

	"github.com/diffgate/diffgate/core/watch"
)

// TestOutsideAspectNamed: the report has a word for every aspect of a
// change that core/watch finds.
func TestOutsideAspectNamed(t *testing.T) {
	for _, a := range watch.Aspects {
		if outsideAspect[a] == "" {
			t.Errorf("watch aspect %q has no report word", a)
		}
	}
	if len(outsideAspect) != len(watch.Aspects) {
		t.Errorf("%d report words for %d aspects", len(outsideAspect), len(watch.Aspects))
	}
}
