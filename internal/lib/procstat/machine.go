package procstat

import (
	"bytes"
	"os"
	"strconv"
)

// CPUTimes is the machine's CPU time so far, from the first line of
// /proc/stat (all CPUs together), in clock ticks (USER_HZ, normally 100
// a second per CPU). Two readings give the busy share between them
// ([BusyShare]).
type CPUTimes struct {
	// Busy is every tick spent working: user, nice, system, irq, softirq
	// and steal (time a hypervisor gave another guest: not ours to use).
	Busy uint64
	// Total is Busy plus the idle and iowait ticks.
	Total uint64
}

// Machine reads the machine's CPU times from /proc/stat; ok is false where
// there is none (not Linux, a sandbox hiding /proc) or it does not parse.
func Machine() (CPUTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, false
	}
	return parseStat(b)
}

// parseStat reads the aggregate "cpu" line of /proc/stat (proc(5)):
// user nice system idle iowait irq softirq steal guest guest_nice.
// guest and guest_nice are already inside user and nice, so they are not
// added again.
func parseStat(b []byte) (CPUTimes, bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return CPUTimes{}, false
	}
	var t CPUTimes
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return CPUTimes{}, false
		}
		t.Total += n
		if i != 3 && i != 4 { // idle, iowait
			t.Busy += n
		}
	}
	return t, true
}

// BusyShare is the share of the machine's CPU time that was busy between
// two readings, in [0, 1]; 0 when no tick passed between them.
func BusyShare(before, after CPUTimes) float64 {
	if after.Total <= before.Total || after.Busy < before.Busy {
		return 0
	}
	return min(float64(after.Busy-before.Busy)/float64(after.Total-before.Total), 1)
}
