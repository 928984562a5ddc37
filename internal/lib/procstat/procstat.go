// Package procstat tells how much CPU a process has used — this one
// (getrusage) or another by pid (/proc/PID/stat, Linux) — for the
// benchmarks that report cores (CPU seconds over wall seconds), and how
// busy the whole machine was (/proc/stat, [Machine]) — for the engine's
// self-check of whether the load generator kept up. The /proc files are
// parsed by github.com/prometheus/procfs.
//
//	a, _ := procstat.Machine()
//	time.Sleep(time.Second)
//	b, _ := procstat.Machine()
//	busy := procstat.BusyShare(a, b) // 0.42: 42% of every CPU's second
package procstat

import (
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// defaultFS is /proc, opened once: procfs checks the mount on opening.
var defaultFS = sync.OnceValues(procfs.NewDefaultFS)

// Self is the CPU time (user and system) this process has used.
func Self() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Of is the CPU time (user and system) process pid has used, 0 when it
// cannot be read, at the kernel's tick resolution (USER_HZ, 10 ms), from
// /proc/PID/stat as procfs parses it.
func Of(pid int) time.Duration {
	fs, err := defaultFS()
	if err != nil {
		return 0
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return 0
	}
	s, err := p.Stat()
	if err != nil {
		return 0
	}
	return time.Duration(s.CPUTime() * float64(time.Second))
}
