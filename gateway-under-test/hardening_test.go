package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handlerGoroutines counts the goroutines serving an HTTP connection that
// are inside the gateway's handler: one per request in progress. Idle
// keep-alive connections and the MCP sessions' own goroutines do not count.
func handlerGoroutines() int {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	n := 0
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "net/http.(*conn).serve") && strings.Contains(g, "leakbench/gateway-under-test.") {
			n++
		}
	}
	return n
}

// startUpload opens a connection to the gateway's /mcp and sends an MCP
// POST whose headers promise a body of initializeBody's length plus pad
// bytes, and only the first sent bytes of it. With chunked, the body goes
// out chunked instead (no length promised), its last chunk never sent.
func startUpload(t *testing.T, mcpURL, token string, sent int, chunked bool) net.Conn {
	t.Helper()
	u, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	body := initializeBody + strings.Repeat(" ", 400)
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", u.Path, u.Host, token)
	req.WriteString("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
	if chunked {
		fmt.Fprintf(&req, "Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", sent, body[:sent])
	} else {
		fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n%s", len(body), body[:sent])
	}
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestSlowBodyIsCutOff: clients that send their headers and then a body
// that never finishes are answered 408 once the body-read timeout passes,
// their connections closed, and the handler goroutines they held return to
// the baseline. Before the body-read timeout existed they were held for as
// long as the client cared to keep the connection open.
func TestSlowBodyIsCutOff(t *testing.T) {
	// Serial (no t.Parallel): counts the process's handler goroutines against a baseline; it must not share the CPU with other tests.
	env := startStack(t, stack.Config{NoGateway: true})
	gw := startGateway(t, env, gateway.Config{Variant: "fixed", BodyReadTimeout: 300 * time.Millisecond})
	acquires := scrape(t, gw.MetricsURL())["mcp_gateway_db_pool_acquires_total"]
	base := handlerGoroutines()

	const clients = 4
	var conns []net.Conn
	for i := range clients {
		conns = append(conns, startUpload(t, gw.URL(), env.Tokens[i], 100, i%2 == 1))
	}
	// Each stalled upload is in a handler (a bound for the machine, not a
	// timed assertion: it only has to see them at some point).
	sawThem := waitFor(10*time.Second, func() bool { return handlerGoroutines() >= base+clients })
	for i, conn := range conns {
		_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second)) // fail, not hang, without the timeout
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("client %d: no answer to a body that never finishes: %v", i, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
			t.Errorf("client %d: %d (close %v), want 408 and the connection closed", i, resp.StatusCode, resp.Close)
		}
	}
	if !waitFor(10*time.Second, func() bool { return handlerGoroutines() <= base }) {
		t.Errorf("handler goroutines: %d, want the baseline %d once the stalled uploads are cut off", handlerGoroutines(), base)
	}
	if !sawThem {
		t.Errorf("never saw the %d stalled uploads in handlers (baseline %d)", clients, base)
	}
	if got := scrape(t, gw.MetricsURL())["mcp_gateway_db_pool_acquires_total"] - acquires; got != 0 {
		t.Errorf("stalled uploads acquired %g database connections, want none", got)
	}
}

// TestAbortedUploadStartsNoScoping: a client that hangs up halfway through
// its request body is answered before token scoping, in every variant: no
// connection is acquired, so commit-in-finally (whose trigger is a request
// cancelled after scoping) leaves no session idle in transaction. Before
// the body was read first, a body with a Content-Length went to scoping
// unread, the hang-up cancelled the request, and commit-in-finally leaked
// one session per aborted upload.
func TestAbortedUploadStartsNoScoping(t *testing.T) {
	// Serial (no t.Parallel): counts the process's handler goroutines against a baseline; it must not share the CPU with other tests.
	env := startStack(t, stack.Config{NoGateway: true})
	s := startSampler(t, env, 100*time.Millisecond)
	for _, v := range gateway.Variants {
		t.Run(string(v), func(t *testing.T) {
			gw := startGateway(t, env, gateway.Config{Variant: string(v), JSONResponse: true, PoolSize: 4})
			// One healthy request first: scoping works, and the pool has a
			// connection to hand out.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs := connect(t, ctx, gw.URL(), env.Tokens[0])
			cs.Close()
			begin := time.Now()
			// (session-outside-request has leaked the connect's sessions
			// by now: counts are compared with these.)
			m := scrape(t, gw.MetricsURL())
			before, unclosed := m["mcp_gateway_db_pool_acquires_total"], m["mcp_gateway_db_pool_unclosed_sessions"]
			base := handlerGoroutines()

			var conns []net.Conn
			for i, chunked := range []bool{false, false, false, true} {
				conns = append(conns, startUpload(t, gw.URL(), env.Tokens[1+i], 60, chunked))
			}
			// Give a gateway that scopes before reading the body the time
			// to do it (unneeded by one that reads first), then hang up.
			time.Sleep(500 * time.Millisecond)
			for _, c := range conns {
				c.Close()
			}
			if !waitFor(10*time.Second, func() bool { return handlerGoroutines() <= base }) {
				t.Errorf("handler goroutines %d, want the baseline %d after the clients hung up", handlerGoroutines(), base)
			}
			time.Sleep(300 * time.Millisecond) // a few samples of pg_stat_activity
			m = scrape(t, gw.MetricsURL())
			if got := m["mcp_gateway_db_pool_acquires_total"] - before; got != 0 {
				t.Errorf("aborted uploads acquired %g database connections, want none (scoping ran for them)", got)
			}
			if got := m["mcp_gateway_db_pool_unclosed_sessions"] - unclosed; got != 0 {
				t.Errorf("aborted uploads left %g more unclosed sessions, want none", got)
			}
			for _, e := range s.Episodes(0) {
				if e.start.After(begin) {
					t.Errorf("session idle in transaction after aborted uploads (held %s, last query %q)", e.hold(), e.query)
				}
			}
		})
	}
}

// TestLongRequestsOutliveTheTimeouts: the body-read and idle timeouts do
// not cut off what legitimately takes long — an SSE answer to a tool that
// runs well past both — and a session idle past the idle timeout carries on
// over a new connection.
func TestLongRequestsOutliveTheTimeouts(t *testing.T) {
	// Serial (no t.Parallel): a client stalled past the 200 ms body timeout would be cut off; it must not share the CPU with other tests.
	env := startStack(t, stack.Config{NoGateway: true})
	gw := startGateway(t, env, gateway.Config{Variant: "fixed", BodyReadTimeout: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connect(t, ctx, gw.URL(), env.Tokens[0])
	res, err := callTool(ctx, cs, "generate_report", map[string]any{"seconds": 1.5})
	if err != nil || res.IsError {
		t.Fatalf("generate_report(1.5 s) with a 200 ms body timeout: %v %q", err, resultText(res))
	}
	time.Sleep(time.Second) // past the idle timeout: the server closes the connection
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_team_tools"}); err != nil {
		t.Fatalf("get_team_tools after the idle timeout: %v", err)
	}
}
