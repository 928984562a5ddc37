package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestEngineClient checks that leakbench's own load engine (the lean MCP
// client in package scenarios/mcp) can use every method of the gateway in
// each answer mode, so that load runs exercise all of it.
func TestEngineClient(t *testing.T) {
	// Parallel: it waits on the gateway and asserts no timing.
	t.Parallel()
	env := startStack(t, stack.Config{NoGateway: true})
	for _, mode := range []struct{ stateless, json bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("stateless=%v/json=%v", mode.stateless, mode.json), func(t *testing.T) {
			gw := startGateway(t, env, gateway.Config{Stateless: mode.stateless, JSONResponse: mode.json, PageSize: 3})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			client := mcp.NewClient(gw.URL(), mcp.ClientOptions{})
			defer client.CloseIdleConnections()
			s := client.NewSession(env.Tokens[2])
			if err := s.Initialize(ctx); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if err := s.Ping(ctx); err != nil {
				t.Errorf("ping: %v", err)
			}
			if err := s.ListTools(ctx); err != nil {
				t.Errorf("tools/list: %v", err)
			}
			for _, call := range []struct{ name, args string }{
				{"get_team_tools", ""}, {"record_note", `{"note":"engine"}`}, {"call_upstream", `{"payload":"x"}`}} {
				var args []byte
				if call.args != "" {
					args = []byte(call.args)
				}
				if err := s.CallTool(ctx, call.name, args); err != nil { // an isError result is an error too
					t.Errorf("tools/call %s: %v", call.name, err)
				}
			}
			if err := s.ListResources(ctx); err != nil {
				t.Errorf("resources/list: %v", err)
			}
			// The lean client keeps no answer: the go-sdk client names a
			// resource to read.
			sdk := connect(t, ctx, gw.URL(), env.Tokens[2])
			res, err := sdk.ListResources(ctx, nil)
			if err != nil || len(res.Resources) == 0 {
				t.Fatalf("resources/list (go-sdk client): %v %v", res, err)
			}
			if err := s.ReadResource(ctx, res.Resources[0].URI); err != nil {
				t.Errorf("resources/read: %v", err)
			}
			if err := s.ListPrompts(ctx); err != nil {
				t.Errorf("prompts/list: %v", err)
			}
			if err := s.GetPrompt(ctx, "recent_notes", nil); err != nil {
				t.Errorf("prompts/get: %v", err)
			}
			if err := s.Close(ctx); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}
