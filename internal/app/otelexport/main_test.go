package otelexport

import (
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestMain lets the benchmark's MCP server run as a child process
// (mcptest.StartHelper), so that its CPU is not the engine's.
func TestMain(m *testing.M) { mcptest.Main(m) }
