package procstat

import (
	"github.com/prometheus/procfs"
)

// CPUTimes is the machine's CPU time so far, from the aggregate line of
// /proc/stat (all CPUs together), in CPU seconds. Two readings give the
// busy share between them ([BusyShare]).
type CPUTimes struct {
	// Busy is every second spent working: user, nice, system, irq,
	// softirq and steal (time a hypervisor gave another guest: not ours
	// to use).
	Busy float64
	// Total is Busy plus the idle and iowait seconds.
	Total float64
}

// Machine reads the machine's CPU times from /proc/stat; ok is false where
// there is none (not Linux, a sandbox hiding /proc) or it does not parse.
func Machine() (CPUTimes, bool) {
	fs, err := defaultFS()
	if err != nil {
		return CPUTimes{}, false
	}
	return machine(fs)
}

// machine reads the aggregate "cpu" line of fs's stat file (proc(5)),
// parsed by procfs: user nice system idle iowait irq softirq steal guest
// guest_nice. guest and guest_nice are already inside user and nice, so
// they are not added again. A file without the aggregate line reads as
// no ticks at all, which is refused: no machine has never run.
func machine(fs procfs.FS) (CPUTimes, bool) {
	s, err := fs.Stat()
	if err != nil {
		return CPUTimes{}, false
	}
	c := s.CPUTotal
	t := CPUTimes{Busy: c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal}
	t.Total = t.Busy + c.Idle + c.Iowait
	if t.Total <= 0 {
		return CPUTimes{}, false
	}
	return t, true
}

// BusyShare is the share of the machine's CPU time that was busy between
// two readings, in [0, 1]; 0 when no tick passed between them.
func BusyShare(before, after CPUTimes) float64 {
	if after.Total <= before.Total || after.Busy < before.Busy {
		return 0
	}
	return min((after.Busy-before.Busy)/(after.Total-before.Total), 1)
}
