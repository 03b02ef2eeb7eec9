package snapshot

import (
	"errors"
	"fmt"
	"path/filepath"
)

// errLarge is returned by ReadContent for a file larger than asked for by ReadContent.
var errLarge = errors.New("file too large")

// ReadContent reads the regular file at rel below root, at most max bytes,
// without following a symlink in its last component and without blocking on
// a FIFO. It is for reading back a file a manifest recorded.
func ReadContent(root, rel string, max int64) ([]byte, error) {
	d, err := openDir(filepath.Dir(filepath.Join(root, filepath.FromSlash(rel))))
	if err != nil {
		return nil, err
	}
	defer d.close()
	data, err := d.readFile(filepath.Base(filepath.FromSlash(rel)), max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return data, nil
}
