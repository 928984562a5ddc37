package probes

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/leakbench/leakbench/internal/testing/pgshared"
)

// TestMain fails the run when any test leaves a goroutine behind: the
// Poller's sampling, scraping and metrics goroutines must all end at Stop.
// The tests' shared PostgreSQL (pgshared) is stopped before that check.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(pgshared.M(m))
}
