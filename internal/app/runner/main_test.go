package runner

import (
	"os"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/pgshared"
	"github.com/leakbench/leakbench/reports"
)

// TestMain puts the stacks of the package's runs (fixtures.Start, local
// provider) on one shared PostgreSQL, each in a database of its own,
// instead of an initdb per stack. A test binary started as a worker
// process (workers_test.go) is one, and runs no test.
//
// The package's sign-offs write reports; run inside GitHub Actions they
// would append them to the job's summary. It is unset here, once, since
// t.Setenv cannot be used by the tests that run in parallel.
func TestMain(m *testing.M) {
	runAsWorker()
	os.Unsetenv(reports.StepSummaryEnv)
	pgshared.RunSharingLocal(m)
}
