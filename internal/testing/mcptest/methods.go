package mcptest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The methods both eras share, the catalogue (tools, prompts, resources),
// pagination, and the caching hints of the 2026-07-28 era.

// answer answers a request of either era (the era-specific refusals are
// done: the 2026 path never brings initialize or ping here).
func (s *handWritten) answer(c *call) (map[string]any, *rpcError) {
	switch c.req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(c.req.Params, &p)
		v := "2025-06-18"
		if p.ProtocolVersion == "2025-03-26" || p.ProtocolVersion == "2025-11-25" {
			v = p.ProtocolVersion
		}
		return map[string]any{"protocolVersion": v, "capabilities": s.legacyCapabilities(),
			"serverInfo": serverInfo}, nil
	case "ping", "logging/setLevel":
		return map[string]any{}, nil
	case methodDiscover:
		if s.opts.DualEra {
			return s.discover(), nil
		}
	case "tools/list":
		return s.list(c, "tools", s.tools())
	case "prompts/list":
		return s.list(c, "prompts", s.prompts())
	case "resources/list":
		return s.list(c, "resources", s.resources())
	case "resources/templates/list":
		if s.opts.DualEra {
			return s.list(c, "resourceTemplates", nil)
		}
	case "resources/read":
		if s.opts.DualEra {
			return s.readResource(c)
		}
	case "tools/call":
		return s.callTool(c)
	case "prompts/get":
		if s.opts.DualEra {
			return s.getPrompt(c)
		}
	case "tasks/get", "tasks/update", "tasks/cancel":
		if c.modern { // the Tasks extension is of the 2026 era
			return s.taskMethod(c)
		}
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found"}
}

// legacyCapabilities are what initialize declares: tools (whose list
// changes, on the GET stream, when there is one), logging (setLevel is
// answered), and with Modern the prompts and resources it then has.
func (s *handWritten) legacyCapabilities() map[string]any {
	tools := map[string]any{}
	if !s.opts.NoGETStream && !s.opts.Stateless {
		tools["listChanged"] = true
	}
	caps := map[string]any{"tools": tools, "logging": map[string]any{}}
	if s.opts.DualEra {
		caps["prompts"] = map[string]any{}
		caps["resources"] = map[string]any{}
	}
	return caps
}

// discover is server/discover's result; it is cacheable like the lists.
func (s *handWritten) discover() map[string]any {
	res := map[string]any{
		"supportedVersions": supportedVersions,
		"capabilities": map[string]any{
			"tools":      map[string]any{"listChanged": true},
			"prompts":    map[string]any{"listChanged": true},
			"resources":  map[string]any{"listChanged": true, "subscribe": true},
			"extensions": map[string]any{extTasks: map[string]any{}},
		},
		"instructions": "mcptest: a hand-written MCP server for tests.",
	}
	s.cacheable(res)
	modernResult(res) // the 2026 shape whichever era asked
	return res
}

// cacheable adds the caching hints (server/utilities/caching): every
// result is the same for all callers, hence public.
func (s *handWritten) cacheable(res map[string]any) {
	res["ttlMs"] = s.opts.TTL.Milliseconds()
	res["cacheScope"] = "public"
}

func (s *handWritten) tools() []any {
	tools := []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}
	if s.opts.DualEra {
		tools = append(tools,
			map[string]any{"name": "ask", "description": "Greets the user by the name it asks for (input_required, 2026-07-28 only).",
				"inputSchema": map[string]any{"type": "object"}},
			map[string]any{"name": "slow_task", "description": "Answers done after a while; a task when the client has the Tasks extension.",
				"inputSchema": map[string]any{"type": "object"}})
	}
	return tools
}

func (s *handWritten) prompts() []any {
	if !s.opts.DualEra {
		return []any{}
	}
	return []any{map[string]any{"name": "ask_prompt", "description": "A greeting for the name it asks for (input_required, 2026-07-28 only)."}}
}

// docs are the resources of a Modern server: three, so that pages of one
// or two show.
var docs = []string{"test://doc/1", "test://doc/2", "test://doc/3"}

func (s *handWritten) resources() []any {
	res := []any{}
	if s.opts.DualEra {
		for i, uri := range docs {
			res = append(res, map[string]any{"uri": uri, "name": fmt.Sprintf("doc%d", i+1), "mimeType": "text/plain"})
		}
	}
	return res
}

// list answers a list method with the page its cursor points at.
func (s *handWritten) list(c *call, key string, items []any) (map[string]any, *rpcError) {
	if items == nil {
		items = []any{}
	}
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(c.req.Params, &p)
	from := 0
	if p.Cursor != nil {
		n, ok := parseCursor(*p.Cursor)
		if !ok || n > len(items) || s.opts.PageSize <= 0 {
			return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", *p.Cursor)}
		}
		from = n
	}
	res := map[string]any{}
	if to := from + s.opts.PageSize; s.opts.PageSize > 0 && to < len(items) {
		items = items[from:to]
		res["nextCursor"] = makeCursor(to)
	} else {
		items = items[from:]
	}
	res[key] = items
	if c.modern {
		s.cacheable(res)
	}
	return res, nil
}

// A cursor is opaque to the client; here it is the offset of the page,
// encoded so that a client treating it as a number is caught.
func makeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("page:" + strconv.Itoa(offset)))
}

func parseCursor(c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "page:"))
	return n, err == nil && strings.HasPrefix(string(b), "page:") && n >= 0
}

func (s *handWritten) readResource(c *call) (map[string]any, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(c.req.Params, &p)
	for i, uri := range docs {
		if uri == p.URI {
			res := map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "text/plain", "text": fmt.Sprintf("document %d", i+1)}}}
			if c.modern {
				s.cacheable(res)
			}
			return res, nil
		}
	}
	if !c.modern {
		return nil, &rpcError{Code: -32002, Message: "Resource not found"} // 2025-era code
	}
	return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("resource not found: %q", p.URI)}
}

func (s *handWritten) callTool(c *call) (map[string]any, *rpcError) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	_ = json.Unmarshal(c.req.Params, &p)
	switch {
	case p.Name == "echo":
		return textResult(fmt.Sprint(p.Arguments["text"])), nil
	case p.Name == "ask" && s.opts.DualEra:
		if !c.modern {
			res := textResult("ask needs protocol " + version2026 + " (input_required)")
			res["isError"] = true
			return res, nil
		}
		return s.ask(c, "tools/call ask", func(name string) map[string]any { return textResult("Hello, " + name + "!") })
	case p.Name == "slow_task" && s.opts.DualEra:
		return s.slowTask(c)
	}
	return nil, &rpcError{Code: codeInvalidParams, Message: "unknown tool"}
}

func (s *handWritten) getPrompt(c *call) (map[string]any, *rpcError) {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(c.req.Params, &p)
	if p.Name != "ask_prompt" {
		return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", p.Name)}
	}
	if !c.modern {
		return nil, &rpcError{Code: codeInvalidParams, Message: "ask_prompt needs protocol " + version2026 + " (input_required)"}
	}
	return s.ask(c, "prompts/get ask_prompt", func(name string) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"role": "user",
			"content": map[string]any{"type": "text", "text": "Hello, " + name + "!"}}}}
	})
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}
