package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// The MCP methods the client sends; each is also the Op of its errors.
const (
	methodInitialize    = "initialize"
	methodPing          = "ping"
	methodListTools     = "tools/list"
	methodCallTool      = "tools/call"
	methodListResources = "resources/list"
	methodReadResource  = "resources/read"
	methodListPrompts   = "prompts/list"
	methodGetPrompt     = "prompts/get"
)

// The request methods below are what a load-test user sends: each checks
// its answer as far as the protocol asks and keeps nothing of it, so that
// a request costs the client as little as it can.

// Ping sends a ping request. 2026-07-28 has no ping (SEP-2577): in that
// era the server's answer is its error for an unknown method.
func (s *Session) Ping(ctx context.Context) error {
	_, err := s.call(ctx, methodPing, "", nil, nil)
	return err
}

// ListTools sends tools/list, following nextCursor pages (at most 100).
// The list methods and ReadResource honour ttlMs with SetCache(true).
func (s *Session) ListTools(ctx context.Context) error { return s.listPages(ctx, methodListTools) }

// ListResources sends resources/list, following nextCursor pages (at most 100).
func (s *Session) ListResources(ctx context.Context) error {
	return s.listPages(ctx, methodListResources)
}

// ListPrompts sends prompts/list, following nextCursor pages (at most 100).
func (s *Session) ListPrompts(ctx context.Context) error { return s.listPages(ctx, methodListPrompts) }

// CallTool calls tool name with args, a JSON object (nil: none). A result
// with isError: true is an *Error of kind KindTool carrying the tool's
// message.
func (s *Session) CallTool(ctx context.Context, name string, args []byte) error {
	bp := getBuf()
	params := appendNameParams((*bp)[:0], name, args)
	// The result is looked into here rather than decoded into a struct
	// by call: a struct passed on as its out would be allocated for
	// every call, and most results carry no isError to decode.
	s.rawOnce = true
	err := s.request(ctx, methodCallTool, name, params, nil)
	putBuf(bp, params)
	res := s.last
	s.rawOnce = false
	if !s.keep {
		s.last = nil
	}
	if err != nil {
		return err
	}
	return s.toolResult(res)
}

// GetPrompt gets prompt name filled with args, a JSON object of strings
// (nil: none).
func (s *Session) GetPrompt(ctx context.Context, name string, args []byte) error {
	return s.request(ctx, methodGetPrompt, name, nameParams(name, args), &objectResult{})
}

// ReadResource reads the resource at uri; with SetCache(true), a result
// still fresh is not read again (Cached).
func (s *Session) ReadResource(ctx context.Context, uri string) error {
	key := ""
	if s.cache {
		if key = cacheKey(methodReadResource, uri); s.fresh(key) {
			s.Next(nil) // the step's options were for the request not sent
			return nil
		}
		s.startListing()
	}
	if err := s.request(ctx, methodReadResource, uri, uriParams(uri), &objectResult{}); err != nil {
		return err
	}
	if s.cache {
		s.store(key)
	}
	return nil
}

// content is one content block of a tool result.
type content struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// toolOutcome is the part of a tools/call result the client looks at. It
// is decoded only if it may carry isError: decoding every result twice
// (once validated in its envelope, once into structs) is a good part of
// the client's CPU per call.
type toolOutcome struct {
	Content []content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

// objectResult checks that a result is a JSON object, without decoding it.
type objectResult struct{}

// listPage is the part of a */list result the client needs.
type listPage struct {
	NextCursor string `json:"nextCursor"`
}

// toolResult checks a tools/call result: an *Error of kind KindTool for
// isError: true (a malformed result is KindProtocol).
func (s *Session) toolResult(result []byte) error {
	if len(result) == 0 || lacksKey(result, `"iserror"`) {
		return nil // no isError member: nothing to decode
	}
	var res toolOutcome
	if err := json.Unmarshal(result, &res); err != nil {
		return &Error{Kind: KindProtocol, Op: methodCallTool, Msg: s.redact("malformed " + methodCallTool + " result: " + jsonErrMsg(err))}
	}
	return s.toolError(&res)
}

func (s *Session) toolError(res *toolOutcome) error {
	if !res.IsError {
		return nil
	}
	msg := "isError result"
	for _, c := range res.Content {
		if c.Type == "text" && c.Text != "" {
			msg = s.redact(textutil.Truncate(c.Text, 200))
			break
		}
	}
	return &Error{Kind: KindTool, Op: methodCallTool, Msg: msg}
}

// listPages sends op (a */list method) page after page, following
// nextCursor; with SetCache(true), a listing still fresh is not sent
// again (Cached).
func (s *Session) listPages(ctx context.Context, op string) error {
	if s.cache {
		if s.fresh(op) {
			return nil
		}
		s.startListing()
	}
	cursor := ""
	for range maxListPages {
		var params []byte
		if cursor != "" {
			params = textutil.AppendJSONString([]byte(`{"cursor":`), cursor)
			params = append(params, '}')
		}
		var page listPage
		if _, err := s.call(ctx, op, "", params, &page); err != nil {
			return err
		}
		if page.NextCursor == "" {
			if s.cache {
				s.store(op)
			}
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
// out. *objectResult, *listPage and *toolOutcome skip decoding when the key
// they look for cannot be there.
func unmarshalResult(data []byte, out any) error {
	quick := func(key string) bool { return lacksKey(data, key) }
	switch out.(type) {
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

// lacksKey reports whether data, a valid JSON object, cannot hold key
// (quoted, lower case) anywhere: no spelling of it is there, as
// encoding/json matches keys case-insensitively and \u escapes could
// spell it.
func lacksKey(data []byte, key string) bool {
	return isObject(data) && !bytes.Contains(data, []byte(`\u`)) && !containsFold(data, key)
}

// containsFold reports whether data holds lower (ASCII, lower case) in any
// case.
func containsFold(data []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(data); i++ {
		if data[i] == lower[0] && textutil.ASCIIEqualFold(data[i:i+len(lower)], lower) {
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

// nameParams builds {"name":name,"arguments":args} (arguments left out when
// args is nil).
func nameParams(name string, args []byte) []byte {
	return appendNameParams(make([]byte, 0, 24+len(name)+len(args)), name, args)
}

// appendNameParams appends nameParams(name, args) to p.
func appendNameParams(p []byte, name string, args []byte) []byte {
	p = append(p, `{"name":`...)
	p = textutil.AppendJSONString(p, name)
	if args != nil {
		p = append(p, `,"arguments":`...)
		p = append(p, args...)
	}
	return append(p, '}')
}

// uriParams builds {"uri":uri}.
func uriParams(uri string) []byte {
	p := textutil.AppendJSONString(append(make([]byte, 0, 12+len(uri)), `{"uri":`...), uri)
	return append(p, '}')
}
