package gateway

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireTools keeps every built-in tool as tools/list sends it, its input and
// output schemas marshaled once. go-sdk keeps a typed tool's schemas as
// *jsonschema.Schema and marshals them again for every tools/list
// (jsonschema's MarshalJSON walks each schema by reflection, field by
// name): 11.6 s of the 71 s of CPU the gateway spent in an incident
// sign-off went there (LEAKBENCH_CPUPROFILE, 2026-12-05), for schemas that
// never change once the server is built. A tool is sent unchanged; only
// the work of encoding it is done once.
type wireTools struct {
	m sync.Map // tool name → wireTool
}

type wireTool struct {
	src, wire *mcp.Tool
}

// of returns t with its schemas as marshaled JSON, from the cache while t
// is still the tool the cache saw under its name; t itself when a schema
// does not marshal (go-sdk then says why, as it would have).
func (w *wireTools) of(t *mcp.Tool) *mcp.Tool {
	if c, ok := w.m.Load(t.Name); ok && c.(wireTool).src == t {
		return c.(wireTool).wire
	}
	wire := *t // a copy: go-sdk's own tool is not changed
	var err error
	if wire.InputSchema, err = rawSchema(t.InputSchema); err != nil {
		return t
	}
	if wire.OutputSchema, err = rawSchema(t.OutputSchema); err != nil {
		return t
	}
	w.m.Store(t.Name, wireTool{src: t, wire: &wire})
	return &wire
}

// rawSchema marshals a schema once; nil stays nil, so that an absent
// outputSchema stays absent (omitempty).
func rawSchema(schema any) (any, error) {
	if schema == nil {
		return nil, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(raw), nil
}
