package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios"
)

// TestEngineClient checks that leakbench's own load engine (the lean MCP
// client in package scenarios) can use every method of the gateway in
// each answer mode, so that load runs exercise all of it.
func TestEngineClient(t *testing.T) {
	env := startStack(t, fixtures.Config{NoGateway: true})
	for _, mode := range []struct{ stateless, json bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("stateless=%v/json=%v", mode.stateless, mode.json), func(t *testing.T) {
			gw := startGateway(t, env, gateway.Config{Stateless: mode.stateless, JSONResponse: mode.json, PageSize: 3})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			client := scenarios.NewClient(gw.URL(), scenarios.ClientOptions{})
			defer client.CloseIdleConnections()
			s := client.NewSession(env.Tokens[2])
			if err := s.Initialize(ctx); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if err := s.Ping(ctx); err != nil {
				t.Errorf("ping: %v", err)
			}
			tools, err := s.ListTools(ctx)
			if err != nil || len(tools) < 7 {
				t.Errorf("tools/list: %d tools, %v", len(tools), err)
			}
			for _, call := range []struct {
				name string
				args map[string]any
			}{{"get_team_tools", nil}, {"record_note", map[string]any{"note": "engine"}}, {"call_upstream", map[string]any{"payload": "x"}}} {
				if res, err := s.CallTool(ctx, call.name, call.args); err != nil || res.IsError {
					t.Errorf("tools/call %s: %v %+v", call.name, err, res)
				}
			}
			res, err := s.ListResources(ctx)
			if err != nil || len(res) == 0 {
				t.Fatalf("resources/list: %v %v", res, err)
			}
			if _, err := s.ReadResource(ctx, res[0].URI); err != nil {
				t.Errorf("resources/read: %v", err)
			}
			if prompts, err := s.ListPrompts(ctx); err != nil || len(prompts) != 2 {
				t.Errorf("prompts/list: %v %v", prompts, err)
			}
			if _, err := s.GetPrompt(ctx, "recent_notes", nil); err != nil {
				t.Errorf("prompts/get: %v", err)
			}
			if err := s.Close(ctx); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}
