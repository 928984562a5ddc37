package dashboard

import (
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestMain checks that no test leaves a goroutine behind (Close ends the
// ticker, the server and every page's stream) and serves mcptest's helper
// processes for the benchmark.
func TestMain(m *testing.M) { mcptest.Main(m) }
