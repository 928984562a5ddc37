package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWireToolsSendTheSameBytes: a tool from the cache marshals to the
// very bytes go-sdk's own tool does (schemas, absent output schema and
// all), the cache gives the same tool again without marshaling, and a new
// tool under the same name is marshaled afresh.
func TestWireToolsSendTheSameBytes(t *testing.T) {
	in, err := jsonschema.For[noteIn](nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.For[noteOut](nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := []*mcp.Tool{
		{Name: "record_note", Description: "typed", InputSchema: in, OutputSchema: out},
		{Name: "plain", Description: "no output schema", InputSchema: map[string]any{"type": "object"}},
	}
	var w wireTools
	for _, tool := range tools {
		want, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		first := w.of(tool)
		got, err := json.Marshal(first)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s on the wire:\n%s\nwant go-sdk's\n%s", tool.Name, got, want)
		}
		if _, raw := first.InputSchema.(json.RawMessage); !raw {
			t.Errorf("%s: the input schema is %T, not marshaled once", tool.Name, first.InputSchema)
		}
		if w.of(tool) != first {
			t.Errorf("%s: a second tools/list marshaled the tool again", tool.Name)
		}
	}
	renamed := &mcp.Tool{Name: "plain", Description: "changed", InputSchema: map[string]any{"type": "object"}}
	if got := w.of(renamed); got.Description != "changed" {
		t.Errorf("a new tool under a cached name was served from the cache: %q", got.Description)
	}
}

// TestRegistryToolSchemaAsBefore: the registered tools' schema, now kept as
// marshaled JSON, is the schema it was as a map.
func TestRegistryToolSchemaAsBefore(t *testing.T) {
	want, err := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"input": map[string]any{"type": "string", "description": "free text for the tool (at most 1000 characters)"},
		},
		"additionalProperties": false,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(registryToolSchema, want) {
		t.Errorf("registryToolSchema\n%s\nwant\n%s", registryToolSchema, want)
	}
}

// BenchmarkToolsListEncoding: what encoding one tools/list answer of the
// gateway's built-in tools costs, as go-sdk keeps them (schemas as
// *jsonschema.Schema, marshaled by reflection every time) and as the
// gateway now sends them (wireTools: marshaled once). The tools are the
// gateway's own, taken from a real tools/list over go-sdk's in-memory
// transport.
func BenchmarkToolsListEncoding(b *testing.B) {
	g := &Gateway{}
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	g.addTools(server, map[string]bool{})
	var tools []*mcp.Tool
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok {
				tools = list.Tools
			}
			return res, err
		}
	})
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil || len(tools) == 0 {
		b.Fatalf("tools/list: %v, %d tools", err, len(tools))
	}
	var w wireTools
	for _, c := range []struct {
		name string
		list func() []*mcp.Tool
	}{
		{"go-sdk", func() []*mcp.Tool { return tools }},
		{"wire", func() []*mcp.Tool { // as listTools does: a cache lookup per tool
			out := make([]*mcp.Tool, len(tools))
			for i, t := range tools {
				out[i] = w.of(t)
			}
			return out
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(&mcp.ListToolsResult{Tools: c.list()}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
