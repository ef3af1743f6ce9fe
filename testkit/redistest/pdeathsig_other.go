//go:build !linux

package redistest

import "syscall"

// setPdeathsig is a no-op where the kernel has no parent-death signal;
// Main and t.Cleanup stop the servers instead.
func setPdeathsig(*syscall.SysProcAttr) {}
