package engine

// http steps: plain HTTP requests on the user's own connection.

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
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

// httpFilter selects http series by a threshold's tags.
func (e *engine) httpMatch(f []threshold.Tag, k seriesKey) bool {
	if k.op != opHTTP {
		return false
	}
	method, name, _ := strings.Cut(e.m.name(k.name), " ")
	return tagsMatch(f, map[string]string{"scenario": e.runs[k.scen].cs.Name, "method": method, "name": name, "status": strconv.Itoa(int(k.status))})
}

// observeHTTP is http_req_duration, http_req_failed and http_reqs.
func (e *engine) observeHTTP(t *plan.CompiledThreshold, all []*merged, elapsed time.Duration) (float64, int64) {
	h := newHist()
	var sent, failed, answered int64
	for _, g := range all {
		if !e.httpMatch(t.Filter, g.key) {
			continue
		}
		h.Merge(g.hist)
		sent += g.reqs
		failed += g.failed
		answered += g.reqs - g.aborted - g.cancelled
	}
	switch t.Name {
	case threshold.MetricHTTPReqDuration:
		return trendValue(h, t.Expr), h.TotalCount()
	case threshold.MetricHTTPReqFailed:
		if answered <= 0 {
			return 0, 0
		}
		return float64(failed) / float64(answered), answered
	}
	return counterValue(sent, elapsed, t.Expr), sent
}

// httpResults sums up the http steps by "METHOD name".
func (e *engine) httpResults(all []*merged) map[string]rundir.HTTPStats {
	type acc struct {
		s rundir.HTTPStats
		h []*merged
	}
	by := map[string]*acc{}
	for _, g := range all {
		if g.key.op != opHTTP {
			continue
		}
		name := e.m.name(g.key.name)
		a := by[name]
		if a == nil {
			a = &acc{s: rundir.HTTPStats{Statuses: map[string]int64{}}}
			by[name] = a
		}
		a.s.Requests += g.reqs
		a.s.Failures += g.failed
		if g.key.status > 0 {
			a.s.Statuses[strconv.Itoa(int(g.key.status))] += g.reqs
		}
		a.h = append(a.h, g)
	}
	if len(by) == 0 {
		return nil
	}
	out := make(map[string]rundir.HTTPStats, len(by))
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := by[n]
		h := newHist()
		for _, g := range a.h {
			h.Merge(g.hist)
		}
		a.s.Latency = statsOf(h)
		out[n] = a.s
	}
	return out
}
