//go:build !unix && !js

package history

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
