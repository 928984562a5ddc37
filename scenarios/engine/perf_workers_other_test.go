//go:build !linux

package engine

// benchWorker: BenchmarkEngineOverFloorWorkers, and so its workers, are
// Linux's (the floor is epoll).
func benchWorker() bool { return false }
