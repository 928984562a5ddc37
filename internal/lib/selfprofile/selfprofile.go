package selfprofile

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// Start starts the Go profiles the environment asks for, for
// whoever works on leakbench itself (docs/development): LEAKBENCH_CPUPROFILE
// names the file of a CPU profile of the whole process, LEAKBENCH_MEMPROFILE
// the file of a heap profile written as it exits. With --env local the
// reference gateway runs inside this process, so the CPU profile shows the
// engine and the gateway side by side. They are environment variables, not
// flags, because they are not the user's business and must work with every
// subcommand unchanged. The returned stop writes what was started; a
// profile that cannot be written is said on stderr and does not change the
// exit code of the run it watched.
func Start(getenv func(string) string, stderr io.Writer) (stop func()) {
	var cpu *os.File
	if path := getenv("LEAKBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
			if err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "leakbench: LEAKBENCH_CPUPROFILE: %v\n", err)
		} else {
			cpu = f
		}
	}
	heap := getenv("LEAKBENCH_MEMPROFILE")
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				fmt.Fprintf(stderr, "leakbench: LEAKBENCH_CPUPROFILE: %v\n", err)
			}
		}
		if heap != "" {
			if err := writeHeapProfile(heap); err != nil {
				fmt.Fprintf(stderr, "leakbench: LEAKBENCH_MEMPROFILE: %v\n", err)
			}
		}
	}
}

// writeHeapProfile writes the heap profile of what is live to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the profile shows what is live at exit, not garbage
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
