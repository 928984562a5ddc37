package probes

// Helpers of the package's own tests for its external tests (package
// probes_test, which may import reports).
var (
	StartStackForTest = startStack
	ConnectForTest    = connect
)
