//go:build !linux

package proc

import "errors"

// checkOverlay: only Linux can run a script over an overlay.
func checkOverlay(spec *Spec) error {
	if spec.Overlay != nil {
		return errors.New("proc: overlay staging needs Linux")
	}
	return nil
}
