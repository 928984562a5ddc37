package starter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestInitGoSDKServer: against the official go-sdk's server (mcptest's:
// echo, a tool that always fails, one that blocks, 12 fillers; its
// resources and prompts), listed two to a page, both eras, init writes a
// file that plays with no failure — the failing and blocking tools tried
// and commented out with their answer, every tool listed across the
// pages.
func TestInitGoSDKServer(t *testing.T) {
	t.Parallel() // waits on servers, not on the CPU
	for _, era := range []struct {
		name string
		o    mcptest.Options
		want string
	}{
		{"2025", mcptest.Options{SDK: true, PageSize: 2, ExtraTools: 12}, "2025-"},
		{"2026-07-28", mcptest.Options{SDK: true, PageSize: 2, ExtraTools: 12, Stateless: true}, "2026-07-28"},
	} {
		t.Run(era.name, func(t *testing.T) {
			srv := mcptest.Start(t, era.o)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := Init(ctx, Options{Target: srv.URL, TryCalls: true, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer writeDebug(t, "starter-sdk-"+era.name+".yaml", res.YAML)
			svc := res.Service
			if !strings.HasPrefix(svc.ProtocolVersion, era.want) {
				t.Errorf("spoke %s; want %s…", svc.ProtocolVersion, era.want)
			}
			if svc.ToolsListed != 15 || len(svc.Tools) != 15 || svc.ToolsCut {
				t.Errorf("listed %d tools (cut %v), kept %d; want all 15 across the 2-tool pages", svc.ToolsListed, svc.ToolsCut, len(svc.Tools))
			}
			y := string(res.YAML)
			for _, want := range []string{
				`"text": {"$pick":["alpha","bravo","charlie"]}   # TODO: free text`,
				"# Tried once, it failed: isError: the tool failed on purpose",
				"# Tried once, it failed: no answer within 1s",
				`- resources/read: { uri: "file:///r0.txt" }`,
				`"who": {"$pick":["alpha","bravo","charlie"]}   # TODO`,
			} {
				if !strings.Contains(y, want) {
					t.Errorf("the file lacks %q", want)
				}
			}
			if !branchOn(res.YAML, "echo") || !branchOn(res.YAML, "tool07") || branchOn(res.YAML, "fail") || branchOn(res.YAML, "slow") {
				t.Errorf("branches: echo %v tool07 %v fail %v slow %v; want echo and the fillers on, fail and slow off",
					branchOn(res.YAML, "echo"), branchOn(res.YAML, "tool07"), branchOn(res.YAML, "fail"), branchOn(res.YAML, "slow"))
			}
			pl := playStarter(t, res.YAML, srv.URL, nil)
			if pl.res.Requests < 5 {
				t.Errorf("played only %d requests", pl.res.Requests)
			}
		})
	}
}
