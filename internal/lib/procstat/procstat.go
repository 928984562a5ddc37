// Package procstat tells how much CPU a process has used — this one
// (getrusage) or another by pid (/proc/PID/stat, Linux) — for the
// benchmarks that report cores (CPU seconds over wall seconds), and how
// busy the whole machine was (/proc/stat, [Machine]) — for the engine's
// self-check of whether the load generator kept up.
//
//	a, _ := procstat.Machine()
//	time.Sleep(time.Second)
//	b, _ := procstat.Machine()
//	busy := procstat.BusyShare(a, b) // 0.42: 42% of every CPU's second
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Self is the CPU time (user and system) this process has used.
func Self() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Of is the CPU time (user and system) process pid has used, 0 when it
// cannot be read, at the kernel's tick resolution (USER_HZ, 10 ms).
func Of(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold blanks: fields count from the
	// last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100
}
