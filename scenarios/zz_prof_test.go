//go:build linux

package scenarios

import (
	"os"
	"testing"
	"time"
)

func TestZZProfileCalls(t *testing.T) {
	if os.Getenv("ZZ") == "" { t.Skip() }
	h := startHelper(t, helperCanned)
	res := engineToolsCall(t, h.URL, 50, 4*time.Second)
	t.Logf("rate %.0f", float64(res.Latency[OpCallTool].Count)/4)
}
