package engine

import (
	"os"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

func TestMain(m *testing.M) {
	if benchWorker() { // a worker process of BenchmarkEngineOverFloorWorkers
		os.Exit(0)
	}
	mcptest.Main(m)
}
