package gateway

import (
	"bytes"
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
