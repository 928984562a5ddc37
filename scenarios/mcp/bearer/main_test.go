package bearer

import (
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }
