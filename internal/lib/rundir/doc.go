// Package rundir owns leakbench's output directories: how one is made,
// marked as leakbench's and cleared again without ever touching a file
// leakbench did not write.
//
//	if err := rundir.Prepare("out/run", force); err != nil {
//		return err // e.g. "out/run holds files leakbench did not write: src/, notes.txt; …"
//	}
package rundir
