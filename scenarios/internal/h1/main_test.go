package h1

import (
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestMain is mcptest's: this binary, started again by the benchmark, is
// its server process (BenchmarkTransportVsNetHTTP); a test run checks for
// leaked goroutines.
func TestMain(m *testing.M) { mcptest.Main(m) }
