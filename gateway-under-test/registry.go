package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Registry queries: the tools registered for the caller's teams, which is
// what tools/list shows beside the built-in tools, and the ownership check
// of a call to one of them.
const (
	sqlRegistryTools = `SELECT tools.name, tools.description FROM tools
WHERE tools.team_id = ANY($1) ORDER BY tools.name LIMIT 1000`

	sqlRegistryTool = `SELECT tools.team_id, tools.description FROM tools
WHERE tools.name = $1 AND tools.team_id = ANY($2) ORDER BY tools.team_id LIMIT 1`
)

// registryToolSchema is the input schema of every registered tool, as
// tools/list sends it (marshaled once: wiretools.go says why).
var registryToolSchema = json.RawMessage(`{"additionalProperties":false,"properties":{"input":{"description":"free text for the tool (at most 1000 characters)","type":"string"}},"type":"object"}`)

// registryMiddleware serves what differs per caller, from the database on
// every request as a gateway with a tool registry does: tools/list (the
// built-in tools plus the caller's teams' registered tools, paginated),
// tools/call of a registered tool, and resources/list (the caller's teams'
// documents). Everything else, and every built-in tool, goes to go-sdk.
func (g *Gateway) registryMiddleware(builtin map[string]bool) mcp.Middleware {
	wire := &wireTools{}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch r := req.(type) {
			case *mcp.ListToolsRequest:
				return g.listTools(ctx, next, r, builtin, wire)
			case *mcp.CallToolRequest:
				if r.Params != nil && !builtin[r.Params.Name] {
					return g.callRegistryTool(ctx, next, r)
				}
			case *mcp.ListResourcesRequest:
				return g.listResources(ctx, next, r)
			}
			return next(ctx, method, req)
		}
	}
}

// listTools merges the built-in tools with the caller's registered tools,
// ordered by name, and returns the page after the cursor.
func (g *Gateway) listTools(ctx context.Context, next mcp.MethodHandler, req *mcp.ListToolsRequest, builtin map[string]bool, wire *wireTools) (mcp.Result, error) {
	var params mcp.ListToolsParams // the request as sent, its _meta included
	if req.Params != nil {
		params = *req.Params
	}
	after, sc, err := listScope(req, params.Cursor)
	if err != nil {
		return nil, err
	}
	// The built-in tools, as go-sdk lists them (all pages).
	var all []*mcp.Tool
	var first *mcp.ListToolsResult
	for params.Cursor = ""; ; {
		res, err := next(ctx, "tools/list", &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &params})
		if err != nil {
			return nil, err
		}
		page := res.(*mcp.ListToolsResult)
		if first == nil {
			first = page
		}
		for _, t := range page.Tools {
			all = append(all, wire.of(t))
		}
		if params.Cursor = page.NextCursor; params.Cursor == "" {
			break
		}
	}
	err = g.withSession(ctx, func(sess *Session) error {
		var name, desc string
		return sess.QueryRows(ctx, sqlRegistryTools, []any{sc.Teams}, []any{&name, &desc}, func() error {
			if !builtin[name] {
				all = append(all, &mcp.Tool{Name: name, Description: desc, InputSchema: registryToolSchema})
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("tools/list: read the tool registry: %w", err)
	}
	first.Tools, first.NextCursor = paginate(all, func(t *mcp.Tool) string { return t.Name }, after, g.cfg.PageSize)
	first.CacheScope = "private" // the list depends on who asks
	return first, nil
}

// listScope is where every per-caller list starts: the key its cursor
// continues after, and the caller's scope.
func listScope(req mcp.Request, cursor string) (after string, sc *Scope, err error) {
	if after, err = decodeCursor(cursor); err != nil {
		return "", nil, err
	}
	sc, err = scopeOf(req)
	return after, sc, err
}

// callRegistryTool runs a tool from the caller's teams' registry: the
// ownership check and the invocation record in one short unit of work. A
// name that is neither built in nor registered for the caller goes on to
// go-sdk, which answers with its "unknown tool" error (-32602).
func (g *Gateway) callRegistryTool(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest) (mcp.Result, error) {
	sc, err := scopeOf(req)
	if err != nil {
		return nil, err
	}
	name := req.Params.Name
	input, argErr := registryArgs(req.Params.Arguments)
	var found bool
	var team int64
	var desc string
	err = g.withSession(ctx, func(sess *Session) (err error) {
		if found, err = sess.QueryRow(ctx, sqlRegistryTool, []any{name, sc.Teams}, &team, &desc); err != nil || !found || argErr != nil {
			return err
		}
		_, err = sess.Exec(ctx, sqlRecordNote, sc.Email, name, input)
		return err
	})
	if err == nil && !found {
		return next(ctx, "tools/call", req)
	}
	res := &mcp.CallToolResult{}
	switch {
	case err != nil:
		res.SetError(fmt.Errorf("run registered tool %s: %w", name, err))
	case argErr != nil:
		res.SetError(fmt.Errorf("validating \"arguments\": %w", argErr))
	default:
		res.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s (team %d) ran: %s", name, team, desc)}}
		res.StructuredContent = map[string]any{"tool": name, "team_id": team, "recorded": true}
	}
	return res, nil
}

// registryArgs validates a registered tool's arguments against
// registryToolSchema and returns its input.
func registryArgs(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return "", nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", errors.New("arguments must be an object")
	}
	var input string
	for k, v := range args {
		if k != "input" {
			return "", fmt.Errorf("unexpected property %q", k)
		}
		if err := json.Unmarshal(v, &input); err != nil {
			return "", errors.New("property \"input\" must be a string")
		}
	}
	if len(input) > 1000 {
		return "", fmt.Errorf("input is %d characters, at most 1000 allowed", len(input))
	}
	return input, nil
}

// cursorKey is the JSON inside a cursor: the sort key of the last item of
// the previous page (keyset pagination, stable while items come and go).
type cursorKey struct {
	After string `json:"after"`
}

func encodeCursor(after string) string {
	b, _ := json.Marshal(cursorKey{After: after}) // a struct of one string always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor returns the key a cursor continues after; "" for no cursor.
// A cursor the gateway did not make is Invalid params (-32602), as the MCP
// spec asks.
func decodeCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	var k cursorKey
	if err == nil {
		err = json.Unmarshal(b, &k)
	}
	if err != nil || k.After == "" {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
	}
	return k.After, nil
}

// paginate sorts items by key and returns the page after the key after,
// at most size long, and the cursor of the next page ("" on the last).
func paginate[T any](items []T, key func(T) string, after string, size int) ([]T, string) {
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	i := 0
	if after != "" {
		i, _ = slices.BinarySearchFunc(items, after, func(it T, k string) int { return strings.Compare(key(it), k) })
		for i < len(items) && key(items[i]) <= after {
			i++
		}
	}
	page := items[i:min(i+size, len(items))]
	if page == nil {
		page = []T{} // an empty page is [], not null, on the wire
	}
	if i+size >= len(items) {
		return page, ""
	}
	return page, encodeCursor(key(page[len(page)-1]))
}
