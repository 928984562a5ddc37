package workers

import (
	"os/exec"
	"syscall"
)

// isolate puts the worker in a process group of its own, so that a
// terminal's Ctrl-C reaches the parent alone (which stops the workers in
// order, their results written) and a kill reaches whatever the worker
// started; and the kernel kills it when the parent dies, even by kill -9.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the worker's process group, the worker with it.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
