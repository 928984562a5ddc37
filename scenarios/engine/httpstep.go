package engine

// http steps: plain HTTP requests on the user's own connection.

import (
	"context"
	"strings"
	"time"

	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// opHTTP is the operation of http steps' series: after the MCP methods
// and the iteration, so MCP metrics (op < numRequestOps) leave them out.
const opHTTP = opIteration + 1

// maxHTTPSnippet bounds the body quoted in an unexpected status's error.
const maxHTTPSnippet = 200

// httpName is the metric name of an http step: "METHOD name".
func httpName(c *plan.CompiledHTTP) string { return c.Method + " " + c.Name }

// httpRequest sends the http step c. Nothing is sent once soft has ended.
func (v *vu) httpRequest(soft, hard context.Context, c *step) bool {
	if soft.Err() != nil || hard.Err() != nil {
		return false
	}
	h := c.HTTP
	k := seriesKey{scen: v.cs.idx, op: opHTTP, name: c.nameID}
	if err := v.varsMissing(c); err != nil {
		v.sr.e.m.record(v.sh, k, -1, err)
		return true
	}
	v.setOptions(c)
	req := mcp.HTTPRequest{Method: h.Method, Path: escapePath(h.Path.Render(&v.tc, &v.nameBuf))}
	head := v.httpHead[:0]
	for _, hd := range h.Headers {
		val := hd.Value.Render(&v.tc, &v.argBuf)
		if strings.ContainsAny(val, "\r\n\x00") {
			v.sr.e.m.record(v.sh, k, -1, &mcp.Error{Kind: mcp.KindProtocol, Op: "http", Msg: "header " + hd.Name + " renders with a line break"})
			return true
		}
		head = append(append(append(append(head, hd.Name...), ": "...), val...), "\r\n"...)
	}
	if h.ContentType != "" {
		head = append(append(append(head, "Content-Type: "...), h.ContentType...), "\r\n"...)
	}
	v.httpHead = head
	req.Headers = head
	if h.HasBody {
		if h.JSONBody != nil {
			v.argBuf = h.JSONBody.AppendJSON(v.argBuf[:0], &v.tc)
		} else {
			v.argBuf = append(v.argBuf[:0], h.TextBody.Render(&v.tc, &v.nameBuf)...)
		}
		req.Body = v.argBuf
		if req.Body == nil {
			req.Body = []byte{}
		}
	}
	ctx := v.traced(hard, c, httpName(h)) // a new trace per request (requestlog.go)
	start := v.reqStart()
	resp, err := v.s.HTTP(ctx, req, v.bodyBuf)
	v.s.ClearTrace()
	v.bodyBuf = resp.Body
	d := time.Since(start)
	var answer []byte
	if err == nil {
		k.status = uint16(resp.Status)
		answer = resp.Body
		if !h.Expected(resp.Status) {
			err = &mcp.Error{Kind: mcp.KindHTTP, Op: "http", Status: resp.Status, Msg: httpSnippet(resp.Body)}
		}
	}
	err = v.judge(c, answer, err)
	v.sr.e.m.record(v.sh, k, d, err)
	if l := v.sr.e.reqlog; l != nil {
		l.add(v, opHTTP, err)
	}
	if cap(v.bodyBuf) > 64<<10 {
		v.bodyBuf = nil // do not keep the odd huge answer alive
	}
	return !isCanceled(err)
}

func httpSnippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b[:min(len(b), maxHTTPSnippet)])), " ")
	if len(b) > maxHTTPSnippet {
		s += "…"
	}
	return s
}

// escapePath percent-encodes what cannot go into a request line
// (blanks, control characters, non-ASCII) of a rendered path.
func escapePath(p string) string {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f {
			var b strings.Builder
			for j := 0; j < len(p); j++ {
				if c := p[j]; c <= ' ' || c >= 0x7f {
					b.WriteByte('%')
					b.WriteByte("0123456789ABCDEF"[c>>4])
					b.WriteByte("0123456789ABCDEF"[c&15])
				} else {
					b.WriteByte(c)
				}
			}
			return b.String()
		}
	}
	return p
}
