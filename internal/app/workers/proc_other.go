//go:build !linux

package workers

import "os/exec"

// isolate: without Linux's parent-death signal and process groups, the
// worker is stopped by the end of its input, else killed alone.
func isolate(*exec.Cmd) {}

// killGroup kills the worker.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
