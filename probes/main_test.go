package probes

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when any test leaves a goroutine behind: the
// Poller's sampling, scraping and metrics goroutines must all end at Stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
