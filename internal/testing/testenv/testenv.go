// Package testenv decides what a test does when a component it needs —
// PostgreSQL, PgBouncer, a Docker engine, Chromium, ip, Python's FastAPI
// stack — is not on the machine.
//
// On a developer's laptop the test skips and says why. In CI, where
// .ci/run installs every component, a missing one is a broken install
// step, not a reason to pass: with LEAKBENCH_REQUIRE_COMPONENTS=1 in the
// environment the same call fails the test instead, so a missing
// package cannot turn the suite green.
//
//	if _, err := exec.LookPath("chromium"); err != nil {
//		testenv.Missing(t, "chromium is not installed (apt-get install chromium): %v", err)
//	}
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RequireVar is the environment variable that makes a missing component
// a failure rather than a skip. .ci/run sets it.
const RequireVar = "LEAKBENCH_REQUIRE_COMPONENTS"

// Required reports whether missing components fail tests (RequireVar is
// set to anything but "" or "0").
func Required() bool {
	v := os.Getenv(RequireVar)
	return v != "" && v != "0"
}

// Missing ends the test because a component it needs is absent: a skip
// with the reason, or, when Required, a failure saying the same and
// naming RequireVar.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	reason := fmt.Sprintf(format, args...)
	if Required() {
		tb.Fatalf("%s (a required component is missing: %s is set, so this fails instead of skipping)", reason, RequireVar)
	}
	tb.Skip(reason)
}
