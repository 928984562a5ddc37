package reports

import "testing"

// For the tests of package reports_test.

func Golden(t *testing.T, name string, got []byte) { golden(t, name, got) }
