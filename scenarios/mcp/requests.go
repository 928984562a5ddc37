package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The MCP methods a virtual user can send, and their names in results and
// metric tags ("method").
const (
	OpInitialize    = "initialize"
	OpPing          = "ping"
	OpListTools     = "tools/list"
	OpCallTool      = "tools/call"
	OpListResources = "resources/list"
	OpReadResource  = "resources/read"
	OpListPrompts   = "prompts/list"
	OpGetPrompt     = "prompts/get"
	// OpDelete is the HTTP DELETE of an endSession step (or of an
	// initialize step replacing a live session).
	OpDelete = "DELETE"
	// OpAll is the key of Result.Latency over every method.
	OpAll = "all"
)

// Tool is a tool as listed by tools/list.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Content is one content block of a tool result or prompt message.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// CallToolResult is the result of tools/call.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// Resource is a resource as listed by resources/list.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ResourceContents is one item of a resources/read result; Blob is base64.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// Prompt is a prompt as listed by prompts/list.
type Prompt struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is an argument a prompt takes.
type PromptArgument struct {
	Name     string `json:"name"`
	Required bool   `json:"required,omitempty"`
}

// PromptMessage is one message of a prompts/get result.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// Ping sends a ping request.
func (s *Session) Ping(ctx context.Context) error {
	_, err := s.call(ctx, OpPing, nil, nil)
	return err
}

// ListTools lists all tools, following nextCursor pages (at most 100).
func (s *Session) ListTools(ctx context.Context) ([]Tool, error) {
	return listItems[Tool](ctx, s, OpListTools, "tools")
}

// ListResources lists all resources, following nextCursor pages (at most 100).
func (s *Session) ListResources(ctx context.Context) ([]Resource, error) {
	return listItems[Resource](ctx, s, OpListResources, "resources")
}

// ListPrompts lists all prompts, following nextCursor pages (at most 100).
func (s *Session) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return listItems[Prompt](ctx, s, OpListPrompts, "prompts")
}

// CallTool calls tool name with args. A result with isError: true is
// returned together with an *Error of kind KindTool.
func (s *Session) CallTool(ctx context.Context, name string, args map[string]any) (*CallToolResult, error) {
	raw, err := marshalArgs(OpCallTool, args)
	if err != nil {
		return nil, err
	}
	return s.callTool(ctx, name, raw, &CallToolResult{})
}

// ReadResource reads the resource at uri.
func (s *Session) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if _, err := s.call(ctx, OpReadResource, uriParams(uri), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// GetPrompt gets prompt name filled with args.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	raw, err := marshalArgs(OpGetPrompt, args)
	if err != nil {
		return nil, err
	}
	var res GetPromptResult
	if _, err := s.call(ctx, OpGetPrompt, nameParams(name, raw), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// callTool sends tools/call with args given as a JSON object (or nil),
// decoding the result into res: a *CallToolResult in full, or a
// *toolOutcome (the engine's) only as far as isError needs.
func (s *Session) callTool(ctx context.Context, name string, args []byte, res interface{ outcome() *CallToolResult }) (*CallToolResult, error) {
	if _, err := s.call(ctx, OpCallTool, nameParams(name, args), res); err != nil {
		return nil, err
	}
	return s.toolResult(res.outcome())
}

func (r *CallToolResult) outcome() *CallToolResult { return r }

// toolOutcome decodes a tools/call result only if it may carry isError:
// the engine needs no more, and decoding every result twice (once
// validated in its envelope, once into structs) is a good part of the
// client's CPU per call.
type toolOutcome struct{ CallToolResult }

func (r *toolOutcome) outcome() *CallToolResult { return &r.CallToolResult }

// objectResult checks that a result is a JSON object, without decoding it.
type objectResult struct{}

// listPage is the part of a */list result the engine needs.
type listPage struct {
	NextCursor string `json:"nextCursor"`
}

func (s *Session) toolResult(res *CallToolResult) (*CallToolResult, error) {
	if res.IsError {
		msg := "isError result"
		for _, c := range res.Content {
			if c.Type == "text" && c.Text != "" {
				msg = s.redact(truncate(c.Text, 200))
				break
			}
		}
		return res, &Error{Kind: KindTool, Op: OpCallTool, Msg: msg}
	}
	return res, nil
}

// listItems collects the items under key of every page of a */list method.
func listItems[T any](ctx context.Context, s *Session, op, key string) ([]T, error) {
	var items []T
	err := s.listPages(ctx, op, func(raw json.RawMessage) error {
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		var got []T
		if v, ok := page[key]; ok {
			if err := json.Unmarshal(v, &got); err != nil {
				return err
			}
		}
		items = append(items, got...)
		return nil
	})
	return items, err
}

// listPages sends op (a */list method) page after page, following
// nextCursor, and hands each page's result to each (if not nil).
func (s *Session) listPages(ctx context.Context, op string, each func(json.RawMessage) error) error {
	cursor := ""
	for range maxListPages {
		var params []byte
		if cursor != "" {
			params = appendJSONString([]byte(`{"cursor":`), cursor)
			params = append(params, '}')
		}
		var page listPage
		var raw json.RawMessage
		var out any = &page // the engine only follows the pages
		if each != nil {
			out = &raw
		}
		if _, err := s.call(ctx, op, params, out); err != nil {
			return err
		}
		var err error
		if each != nil {
			if err = json.Unmarshal(raw, &page); err == nil {
				err = each(raw)
			}
		}
		if err != nil {
			return &Error{Kind: KindProtocol, Op: op, Msg: s.redact("malformed " + op + " result: " + jsonErrMsg(err))}
		}
		if page.NextCursor == "" {
			return nil
		}
		if page.NextCursor == cursor {
			return &Error{Kind: KindProtocol, Op: op, Msg: "nextCursor repeats the cursor sent"}
		}
		cursor = page.NextCursor
	}
	return &Error{Kind: KindProtocol, Op: op, Msg: fmt.Sprintf("more than %d pages", maxListPages)}
}

// unmarshalResult decodes a JSON-RPC result (already validated JSON) into
// out. A *json.RawMessage takes the bytes as they are; the engine's
// *objectResult, *listPage and *toolOutcome skip decoding when the key
// they look for cannot be there.
func unmarshalResult(data []byte, out any) error {
	// The key cannot be there if no spelling of it is: encoding/json
	// matches keys case-insensitively, and \u escapes could spell it.
	quick := func(key string) bool {
		return isObject(data) && !bytes.Contains(data, []byte(`\u`)) && !containsFold(data, key)
	}
	switch o := out.(type) {
	case *json.RawMessage:
		*o = append((*o)[:0], data...)
		return nil
	case *objectResult:
		if isObject(data) {
			return nil
		}
	case *listPage:
		if quick(`"nextcursor"`) {
			return nil
		}
	case *toolOutcome:
		if quick(`"iserror"`) {
			return nil
		}
	}
	return json.Unmarshal(data, out)
}

// containsFold reports whether data holds lower (ASCII, lower case) in any
// case.
func containsFold(data []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(data); i++ {
		if data[i] == lower[0] && asciiEqualFold(data[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

// isObject reports whether valid JSON data is an object.
func isObject(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '{'
}

func marshalArgs[M ~map[string]V, V any](op string, args M) ([]byte, error) {
	if len(args) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, &Error{Kind: KindProtocol, Op: op, Msg: "encode arguments", Err: err}
	}
	return raw, nil
}

// nameParams builds {"name":name,"arguments":args} (arguments left out when
// args is nil).
func nameParams(name string, args []byte) []byte {
	p := make([]byte, 0, 24+len(name)+len(args))
	p = append(p, `{"name":`...)
	p = appendJSONString(p, name)
	if args != nil {
		p = append(p, `,"arguments":`...)
		p = append(p, args...)
	}
	return append(p, '}')
}

// uriParams builds {"uri":uri}.
func uriParams(uri string) []byte {
	p := appendJSONString(append(make([]byte, 0, 12+len(uri)), `{"uri":`...), uri)
	return append(p, '}')
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
