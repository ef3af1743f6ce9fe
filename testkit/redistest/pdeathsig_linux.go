package redistest

import "syscall"

// setPdeathsig makes the child die with the test binary, so a crashed or
// killed test run leaves no redis-server behind.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
