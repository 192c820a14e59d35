//go:build unix

package rulesfile

import "syscall"

// nonblock opens a rules file without waiting for a named pipe's writer.
const nonblock = syscall.O_NONBLOCK
