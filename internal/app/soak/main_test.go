package soak

import (
	"testing"

	"github.com/leakbench/leakbench/internal/testing/pgshared"
)

// TestMain puts the stacks of the package's runs (fixtures.Start, local
// provider) on one shared PostgreSQL, each in a database of its own,
// instead of an initdb per stack.
func TestMain(m *testing.M) { pgshared.RunSharingLocal(m) }
