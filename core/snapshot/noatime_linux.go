package snapshot

import "golang.org/x/sys/unix"

// oNoAtime opens without updating the access time (Linux only).
const oNoAtime = unix.O_NOATIME
