package mcp

import (
	"testing"

	"github.com/leakbench/leakbench/scenarios/internal/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }
