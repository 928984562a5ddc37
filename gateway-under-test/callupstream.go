package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// call_upstream's bookkeeping: a row before the call, completed after it.
const (
	sqlInsertUpstreamCall = `INSERT INTO upstream_calls (user_email, request) VALUES ($1, $2) RETURNING id`

	sqlFinishUpstreamCall = `UPDATE upstream_calls SET status = $2, http_status = $3, response = $4, finished_at = now()
WHERE id = $1`
)

// maxUpstreamAnswer bounds how much of the upstream's answer is read.
const maxUpstreamAnswer = 64 << 10

type upstreamIn struct {
	Payload   string `json:"payload,omitempty" jsonschema:"text to send to the upstream (at most 4000 characters)"`
	LatencyMS *int64 `json:"upstream_latency_ms,omitempty" jsonschema:"ask the test upstream to take this long, in milliseconds (default: the upstream's own latency)"`
}

type upstreamOut struct {
	CallID     int64   `json:"call_id"`
	HTTPStatus int     `json:"http_status"`
	Answer     string  `json:"answer"`
	Seconds    float64 `json:"seconds"`
}

// addUpstreamTool registers call_upstream, with the variant's code path.
func (g *Gateway) addUpstreamTool(s *mcp.Server, builtin map[string]bool) {
	call := g.callUpstreamReleased
	if g.variants[VariantHeldAcrossUpstream] {
		call = g.callUpstreamHeldTx
	}
	addTool(s, builtin, &mcp.Tool{Name: "call_upstream", Description: "Forward a payload to the upstream service, as a federating gateway does, and record the call."},
		func(ctx context.Context, req *mcp.CallToolRequest, in upstreamIn) (*mcp.CallToolResult, upstreamOut, error) {
			sc, err := scopeOf(req)
			if err != nil {
				return nil, upstreamOut{}, err
			}
			if len(in.Payload) > 4000 {
				return nil, upstreamOut{}, fmt.Errorf("payload is %d characters, at most 4000 allowed", len(in.Payload))
			}
			if in.LatencyMS != nil && (*in.LatencyMS < 0 || *in.LatencyMS > 600_000) {
				return nil, upstreamOut{}, fmt.Errorf("upstream_latency_ms must be between 0 and 600000, got %d", *in.LatencyMS)
			}
			ctx, cancel := g.bound(ctx)
			defer cancel()
			out, err := call(ctx, sc, in)
			return nil, out, err
		})
}

// callUpstreamHeldTx is the held-across-upstream bug (ContextForge #2518,
// #2323; fixed by PR #2529, "release sessions before external HTTP
// calls"): one unit of work spans the upstream call, so the transaction
// that wrote the bookkeeping row sits "idle in transaction" — holding a
// pool slot and a PgBouncer server connection — for the upstream's whole
// latency. When the upstream is slower than
// idle_in_transaction_session_timeout, PostgreSQL kills the session
// (25P03) and the next statement on the connection, the UPDATE, fails:
// ContextForge's ~100 "idle transaction timeout" errors a minute.
func (g *Gateway) callUpstreamHeldTx(ctx context.Context, sc *Scope, in upstreamIn) (upstreamOut, error) {
	var out upstreamOut
	sess, err := g.store.NewSession(ctx)
	if err != nil {
		return out, fmt.Errorf("call upstream: %w", err)
	}
	defer sess.Detach()
	defer sess.Close()
	if out.CallID, err = insertUpstreamCall(ctx, sess, sc.Email, in.Payload); err != nil {
		return out, err
	}
	res := g.callUpstreamHTTP(ctx, in) // BUG: the transaction stays open while the upstream takes its time
	if err := finishUpstreamCall(ctx, sess, out.CallID, res); err != nil {
		return out, err
	}
	if err := sess.Commit(ctx); err != nil {
		return out, fmt.Errorf("record upstream call %d: %w", out.CallID, err)
	}
	return res.result(out.CallID)
}

// callUpstreamReleased is the fix (PR #2529): write the bookkeeping row in
// one short unit of work, release it, call the upstream holding no
// connection, then record the answer in a second short unit of work.
func (g *Gateway) callUpstreamReleased(ctx context.Context, sc *Scope, in upstreamIn) (upstreamOut, error) {
	var out upstreamOut
	err := g.withSession(ctx, func(sess *Session) error {
		var err error
		out.CallID, err = insertUpstreamCall(ctx, sess, sc.Email, in.Payload)
		return err
	})
	if err != nil {
		return out, err
	}
	res := g.callUpstreamHTTP(ctx, in) // no connection held
	err = g.withSession(ctx, func(sess *Session) error {
		return finishUpstreamCall(ctx, sess, out.CallID, res)
	})
	if err != nil {
		return out, err
	}
	return res.result(out.CallID)
}

func insertUpstreamCall(ctx context.Context, sess *Session, email, payload string) (int64, error) {
	var id int64
	if _, err := sess.QueryRow(ctx, sqlInsertUpstreamCall, []any{email, payload}, &id); err != nil {
		return 0, fmt.Errorf("record upstream call: %w", err)
	}
	return id, nil
}

func finishUpstreamCall(ctx context.Context, sess *Session, id int64, res upstreamResult) error {
	status := "ok"
	if res.err != nil || res.status != http.StatusOK {
		status = "failed"
	}
	answer := res.answer
	if res.err != nil {
		answer = res.err.Error()
	}
	if _, err := sess.Exec(ctx, sqlFinishUpstreamCall, id, status, res.status, answer); err != nil {
		return fmt.Errorf("record the upstream's answer to call %d: %w", id, err)
	}
	return nil
}

// upstreamResult is what one upstream HTTP call came back with.
type upstreamResult struct {
	status  int
	answer  string
	elapsed time.Duration
	err     error // transport error: no answer at all
}

// result turns the upstream's answer into call_upstream's: a failed call
// is a tool error, so the caller (a model) sees what went wrong.
func (r upstreamResult) result(id int64) (upstreamOut, error) {
	out := upstreamOut{CallID: id, HTTPStatus: r.status, Answer: r.answer, Seconds: r.elapsed.Seconds()}
	switch {
	case r.err != nil:
		return out, fmt.Errorf("upstream call %d: %w", id, r.err)
	case r.status != http.StatusOK:
		return out, fmt.Errorf("upstream call %d: upstream answered %d: %s", id, r.status, strings.TrimSpace(r.answer))
	}
	return out, nil
}

var errNoUpstream = errors.New("no upstream configured (start the gateway with --upstream-url)")

// upstreamCallURL is the upstream's /call endpoint, from Config.UpstreamURL
// (nil when none is configured). An error names no part of the URL, which
// may carry credentials.
func upstreamCallURL(base string) (*url.URL, error) {
	if base == "" {
		return nil, nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("upstream URL: want http://HOST[:PORT][/PATH] or https://…")
	}
	return u.JoinPath("call"), nil
}

// callUpstreamHTTP POSTs the payload to the upstream's /call.
func (g *Gateway) callUpstreamHTTP(ctx context.Context, in upstreamIn) (res upstreamResult) {
	if g.upstreamCall == nil {
		return upstreamResult{err: errNoUpstream}
	}
	start := time.Now()
	defer func() { res.elapsed = time.Since(start) }()
	u := *g.upstreamCall
	if in.LatencyMS != nil {
		u.RawQuery = url.Values{"latency_ms": {strconv.FormatInt(*in.LatencyMS, 10)}}.Encode()
	}
	body, _ := json.Marshal(map[string]string{"payload": in.Payload}) // a map of strings always marshals
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return upstreamResult{err: fmt.Errorf("build upstream request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.upstream.Do(req)
	if err != nil {
		return upstreamResult{err: fmt.Errorf("call upstream: %w", err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamAnswer))
	if err != nil {
		return upstreamResult{status: resp.StatusCode, err: fmt.Errorf("read upstream answer: %w", err)}
	}
	return upstreamResult{status: resp.StatusCode, answer: string(b)}
}
