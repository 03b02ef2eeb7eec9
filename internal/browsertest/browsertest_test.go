package browsertest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// page is a small page that shows what the helper does to it: the keys it
// got, the file picked, the colour scheme; a button downloads a file.
const testPage = `<!doctype html>
<html><head><style>
html, body { margin: 0; height: 100%; background: #1a7f37; }
@media (prefers-color-scheme: dark) { html, body { background: #f85149; } }
#pick { position: absolute; left: 10px; top: 10px; width: 100px; height: 40px; }
#save { position: absolute; left: 10px; top: 60px; width: 100px; height: 40px; }
</style></head><body>
<button id="pick">pick</button><button id="save">save</button>
<script>
window.keys = [];
window.picked = null;
document.addEventListener('keydown', (e) => keys.push('down:' + (e.ctrlKey ? 'Control+' : '') + e.key));
document.addEventListener('keypress', (e) => keys.push('press:' + e.key));
document.getElementById('pick').addEventListener('click', () => {
	const input = document.createElement('input');
	input.type = 'file';
	input.style.display = 'none';
	document.body.appendChild(input);
	input.addEventListener('change', async () => { window.picked = input.files[0].name + ':' + await input.files[0].text(); });
	input.click();
});
document.getElementById('save').addEventListener('click', () => {
	const a = document.createElement('a');
	a.href = URL.createObjectURL(new Blob(['saved text'], {type: 'text/plain'}));
	a.download = 'out.txt';
	document.body.appendChild(a);
	a.click();
	a.remove();
});
</script></body></html>`

func TestTab(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(testPage))
	}))
	defer srv.Close()
	b := Start(t)

	t.Run("light", func(t *testing.T) {
		tab := b.NewTab(t, TabOptions{Width: 300, Height: 200})
		tab.Navigate(srv.URL)
		img := DecodePNG(t, tab.Screenshot())
		if got := img.Bounds(); got.Dx() != 300 || got.Dy() != 200 {
			t.Fatalf("screenshot %v, want 300x200", got)
		}
		if n := Count(img, Hex("#1a7f37"), 2, Bounds(img)); n < 300*200/2 {
			t.Errorf("%d green pixels in the light scheme", n)
		}

		tab.Press("a")
		tab.Press("Enter")
		tab.Press("Control+End")
		tab.Press("ArrowDown")
		keys := Eval[[]string](tab, `window.keys`)
		// A held Control is in the modifiers of its own keydown too, as on a
		// real keyboard; no keypress comes with Control.
		want := "down:a press:a down:Enter press:Enter down:Control+Control down:Control+End down:ArrowDown"
		if got := strings.Join(keys, " "); got != want {
			t.Errorf("keys: %s\nwant %s", got, want)
		}

		file := filepath.Join(t.TempDir(), "in.json")
		if err := os.WriteFile(file, []byte(`{"a": 1}`), 0o644); err != nil {
			t.Fatal(err)
		}
		tab.PickFile(file, func() { tab.Click(60, 30) })
		got := Eval[string](tab, `new Promise((r) => { const f = () => window.picked ? r(window.picked) : requestAnimationFrame(f); f(); })`)
		if got != `in.json:{"a": 1}` {
			t.Errorf("picked %q", got)
		}

		name, data := tab.Download(func() { tab.Click(60, 80) })
		if name != "out.txt" || string(data) != "saved text" {
			t.Errorf("downloaded %q: %q", name, data)
		}
		if p := tab.Problems(); len(p) > 0 {
			t.Errorf("problems: %v", p)
		}
	})
	t.Run("dark", func(t *testing.T) {
		tab := b.NewTab(t, TabOptions{Width: 300, Height: 200, Dark: true})
		tab.Navigate(srv.URL)
		img := DecodePNG(t, tab.Screenshot())
		if n := Count(img, Hex("#f85149"), 2, Bounds(img)); n < 300*200/2 {
			t.Errorf("%d red pixels in the dark scheme", n)
		}
	})
}
