package snapshot

import (
	"errors"
	"fmt"
	"strings"
)

// errLarge is returned by ReadContent for a file larger than asked for by ReadContent.
var errLarge = errors.New("file too large")

// ReadContent reads the regular file at rel below root, at most max bytes,
// as the walk reaches it: directory by directory relative to the parent's
// descriptor, never following a symlink (in the root or any component) and
// without blocking on a FIFO. It is for reading back a file a manifest
// recorded.
func ReadContent(root, rel string, max int64) ([]byte, error) {
	var self Entry
	d, err := openRoot(root, &self)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		sub, err := d.openSub(toZname(p))
		d.close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		d = sub
	}
	defer d.close()
	data, err := d.readFile(parts[len(parts)-1], max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return data, nil
}
