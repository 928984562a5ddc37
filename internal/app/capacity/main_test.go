package capacity

import (
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/internal/testing/pgshared"
)

// TestMain serves mcptest's helper processes, checks for goroutines left
// behind, and stops the PostgreSQL cluster the probed searches share
// (pgshared.Start) when the tests end.
func TestMain(m *testing.M) { mcptest.Main(pgshared.M(m)) }
