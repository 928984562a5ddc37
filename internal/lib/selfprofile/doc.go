// Package selfprofile writes Go profiles of leakbench itself when the
// environment asks for them (LEAKBENCH_CPUPROFILE, LEAKBENCH_MEMPROFILE),
// for whoever works on leakbench (docs/development): where a run spends
// its CPU, the load engine and an in-process gateway side by side.
//
// It is apart from cmd/leakbench because it is no part of any subcommand:
// main starts it around whichever one runs, and it is tested on its own.
//
//	stop := selfprofile.Start(os.Getenv, os.Stderr)
//	defer stop() // writes the heap profile, ends the CPU profile
package selfprofile
