package web

import (
	"bytes"
	"errors"
	"log"
	"testing"

	"fyne.io/fyne/v2"
)

// TestWithoutCacheNoise: the two cache errors Fyne logs at start in a
// browser (six console lines) are dropped; another error, and the logger's
// output afterwards, are kept.
func TestWithoutCacheNoise(t *testing.T) {
	var out bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&out)
	defer log.SetOutput(prev)
	WithoutCacheNoise(&out, func() {
		fyne.LogError("Failed to create fyne cache space", errors.New("not supported"))
		fyne.LogError("Failed to create app cache space", errors.New("not supported"))
		fyne.LogError("Something else", errors.New("boom"))
	})
	got := out.String()
	if bytes.Contains(out.Bytes(), []byte("cache space")) || bytes.Count(out.Bytes(), []byte("\n")) != 3 ||
		!bytes.Contains(out.Bytes(), []byte("Fyne error:  Something else")) || !bytes.Contains(out.Bytes(), []byte("Cause: boom")) {
		t.Errorf("logged:\n%s", got)
	}
	log.Print("after")
	if !bytes.Contains(out.Bytes(), []byte("after")) {
		t.Error("the logger's output was not restored")
	}
}
