package starter

// TryCalls: each synthesised call sent once, so that the file comments
// out what fails (a tool that needs an id only another call gives, a
// prompt that wants a real team) instead of failing every run.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// try sends every tools/call, prompts/get and resources/read of svc once,
// recording the failures.
func (c *conn) try(ctx context.Context, o Options, svc *Service) {
	call := func(f func(ctx context.Context) error) string {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		err := f(cctx)
		switch {
		case err == nil:
			return ""
		case cctx.Err() != nil && ctx.Err() == nil:
			return fmt.Sprintf("no answer within %s", o.Timeout)
		}
		return oneLine(err.Error(), 160)
	}
	for i := range svc.Tools {
		t := &svc.Tools[i]
		if t.TODO != "" {
			continue // not written as a call anyway
		}
		args := map[string]any{}
		for _, a := range t.Arguments {
			args[a.Name] = concrete(a.Value)
		}
		start := time.Now()
		t.Failed = call(func(ctx context.Context) error {
			res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: t.Name, Arguments: args})
			if err != nil {
				return err
			}
			if res.IsError {
				return fmt.Errorf("isError: %s", toolText(res))
			}
			return nil
		})
		t.Took = time.Since(start)
	}
	for i := range svc.Prompts {
		p := &svc.Prompts[i]
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a.Required {
				args[a.Name] = promptGuess
			}
		}
		p.Failed = call(func(ctx context.Context) error {
			_, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: args})
			return err
		})
	}
	for i := range svc.Resources {
		r := &svc.Resources[i]
		r.Failed = call(func(ctx context.Context) error {
			_, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: r.URI})
			return err
		})
	}
}

// toolText is the start of an isError result's text.
func toolText(res *sdk.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			return t.Text
		}
	}
	return "(no text)"
}

var (
	randIntRE  = regexp.MustCompile(`^\{\{randInt (-?\d+) (-?\d+)\}\}$`)
	templateRE = regexp.MustCompile(`\{\{(randInt (-?\d+) -?\d+|user|iteration)\}\}`)
)

// concrete is one value a synthesised one may take: a $pick's first, a
// randInt's low end, {{user}} 0 — what a tried call sends.
func concrete(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if p, ok := v["$pick"].([]any); ok && len(v) == 1 && len(p) > 0 {
			return concrete(p[0])
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = concrete(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = concrete(x)
		}
		return out
	case string:
		if m := randIntRE.FindStringSubmatch(v); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			return json.Number(strconv.FormatInt(n, 10))
		}
		return templateRE.ReplaceAllStringFunc(v, func(t string) string {
			if m := templateRE.FindStringSubmatch(t); m[2] != "" {
				return m[2]
			}
			return "0"
		})
	}
	return v
}
