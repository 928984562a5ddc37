package mcptest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// The benchmarks load a server that runs in a child process (this test
// binary, started again with helperEnv set), so that the engine's memory
// and CPU are measured without the server's.
const helperEnv = "LEAKBENCH_SCENARIOS_HELPER"

// helperAddrEnv, when set, makes a helper listen on that host:port with
// SO_REUSEPORT ("127.0.0.1:0": a free port), so that several helper
// processes share one port ([StartHelpers]).
const helperAddrEnv = "LEAKBENCH_SCENARIOS_HELPER_ADDR"

// Helper kinds.
const (
	HelperCanned = "canned"       // a trivial MCP endpoint with fixed answers
	HelperDelay  = "canned-delay" // the same, tools/call answered after HelperDelayTime
	HelperSDK    = "sdk"          // the go-sdk server with echo alone, JSON answers, stateful
)

// HelperDelayTime is how long the delay helper takes per tools/call.
const HelperDelayTime = 20 * time.Millisecond

// Main is a test package's TestMain: in a helper process started by
// [StartHelper] it serves the helper's endpoint instead of running tests;
// otherwise it runs the tests and checks that none left a goroutine
// behind. m is a *testing.M, or one wrapped to stop what the package's
// tests shared (pgshared.M).
func Main(m goleak.TestingM) {
	if kind := os.Getenv(helperEnv); kind != "" {
		os.Exit(serveHelper(kind)) // a benchmark's server process, not a test run
	}
	goleak.VerifyTestMain(m)
}

// serveHelper runs a helper server until its stdin closes; it prints
// "ADDR host:port" first.
func serveHelper(kind string) int {
	var ln net.Listener
	var err error
	if addr := os.Getenv(helperAddrEnv); addr != "" {
		ln, err = listenReusePort(addr)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var h http.Handler
	switch kind {
	case HelperCanned:
		h = CannedMCP(0)
	case HelperDelay:
		h = CannedMCP(HelperDelayTime)
	case HelperSDK:
		srv := mcp.NewServer(&mcp.Implementation{Name: "helper", Version: "v0"}, nil)
		addEcho(srv)
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", kind)
		return 2
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	go func() { _ = http.Serve(ln, h) }()
	// Commands, one a line, until the parent closes stdin or dies:
	// "stats" prints the p50 of the delayed calls' real handling time (in
	// µs) since the last "stats"; "listening" the listen streams open.
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "stats":
			handled.mu.Lock()
			fmt.Printf("P50US %d\n", handled.h.ValueAtQuantile(50))
			handled.h.Reset()
			handled.mu.Unlock()
		case "listening":
			fmt.Printf("LISTENING %d\n", listening.Load())
		}
	}
	return 0
}

// handled records how long the delay endpoint really took per call: a
// sleep on a busy machine overshoots, and that is the endpoint's share.
var handled = struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}{h: hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)}

// CannedMCP answers every MCP method with a small fixed result, the way a
// trivial MCP server would, at the least cost: the endpoint for measuring
// the client. It speaks both eras: server/discover offers 2026-07-28, and
// only initialize assigns a session. A subscriptions/listen stream is
// acknowledged and then held open, silent, until the client leaves.
func CannedMCP(delay time.Duration) http.Handler {
	var sessions atomic.Int64
	results := map[string]string{
		"initialize":      `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"canned","version":"1"}}`,
		"server/discover": `{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18"],"capabilities":{"tools":{}},"resultType":"complete"}`,
		"ping":            `{}`,
		"tools/list":      `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`,
		"tools/call":      `{"content":[{"type":"text","text":"hello"}]}`,
		"resources/list":  `{"resources":[{"uri":"file:///a.txt","name":"a"}]}`,
		"resources/read":  `{"contents":[{"uri":"file:///a.txt","text":"x"}]}`,
		"prompts/list":    `{"prompts":[{"name":"p"}]}`,
		"prompts/get":     `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusOK)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		method := methodOf(body)
		if strings.HasPrefix(method, "notifications/") {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if method == "subscriptions/listen" {
			cannedListen(w, r, body)
			return
		}
		res, ok := results[method]
		if !ok {
			http.Error(w, "unknown method", http.StatusBadRequest)
			return
		}
		if method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "s-"+strconv.FormatInt(sessions.Add(1), 10))
		}
		if method == "tools/call" && delay > 0 {
			// Sleep most of it, then spin to the deadline: a timer alone
			// overshoots by a scheduler tick on a busy machine.
			start := time.Now()
			time.Sleep(delay - time.Millisecond)
			for time.Since(start) < delay {
				runtime.Gosched()
			}
			handled.mu.Lock()
			handled.h.RecordValue(time.Since(start).Microseconds()) //nolint:errcheck
			handled.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+IDOf(body)+`,"result":`+res+`}`)
	})
}

// listening counts the canned server's listen streams open.
var listening atomic.Int64

// cannedListen answers subscriptions/listen (2026-07-28) as a listen
// stream that never notifies: the acknowledgement, carrying the request's
// id as the subscription id, then nothing until the client goes away —
// the connection a listening agent holds while it waits.
func cannedListen(w http.ResponseWriter, r *http.Request, body []byte) {
	listening.Add(1)
	defer listening.Add(-1)
	rc := sse(w)
	_, err := io.WriteString(w, `event: message`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"`+
		metaSubscriptionID+`":`+IDOf(body)+`},"notifications":{}}}`+"\n\n")
	if err != nil || rc.Flush() != nil {
		return
	}
	<-r.Context().Done()
}

func methodOf(body []byte) string {
	const key = `"method":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return ""
	}
	rest := body[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// Helper is a running helper process.
type Helper struct {
	URL string // the MCP endpoint
	Cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// HandledP50 asks the delay helper for the p50 of its real handling time
// since the last ask.
func (h *Helper) HandledP50(tb testing.TB) time.Duration {
	if _, err := io.WriteString(h.in, "stats\n"); err != nil {
		tb.Fatal(err)
	}
	line, err := h.out.ReadString('\n')
	us, ok := strings.CutPrefix(strings.TrimSpace(line), "P50US ")
	n, err2 := strconv.ParseInt(us, 10, 64)
	if err != nil || !ok || err2 != nil {
		tb.Fatalf("helper stats: %q %v", line, err)
	}
	return time.Duration(n) * time.Microsecond
}

// Listening asks a canned helper how many listen streams it holds open.
func (h *Helper) Listening(tb testing.TB) int64 {
	if _, err := io.WriteString(h.in, "listening\n"); err != nil {
		tb.Fatal(err)
	}
	line, err := h.out.ReadString('\n')
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTENING ")
	n, err2 := strconv.ParseInt(v, 10, 64)
	if err != nil || !ok || err2 != nil {
		tb.Fatalf("helper listening: %q %v", line, err)
	}
	return n
}

// StartHelper starts a helper server process of the given kind (this test
// binary again, whose TestMain is [Main]); it is stopped when the
// benchmark ends.
func StartHelper(tb testing.TB, kind string) *Helper {
	tb.Helper()
	return startHelper(tb, kind)
}

// StartHelpers starts n helper processes of the given kind sharing one
// port on 127.0.0.1 (SO_REUSEPORT: the kernel spreads the connections
// over their listeners), for loads past what one process may hold open
// (RLIMIT_NOFILE): all have the same URL. They are stopped when the
// benchmark ends.
func StartHelpers(tb testing.TB, kind string, n int) []*Helper {
	tb.Helper()
	hs := []*Helper{startHelper(tb, kind, helperAddrEnv+"=127.0.0.1:0")}
	addr := strings.TrimSuffix(strings.TrimPrefix(hs[0].URL, "http://"), "/mcp")
	for len(hs) < n {
		h := startHelper(tb, kind, helperAddrEnv+"="+addr)
		if h.URL != hs[0].URL {
			tb.Fatalf("helper %d listens at %s, not %s", len(hs), h.URL, hs[0].URL)
		}
		hs = append(hs, h)
	}
	return hs
}

func startHelper(tb testing.TB, kind string, env ...string) *Helper {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+kind), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	h := &Helper{Cmd: cmd, in: in, out: bufio.NewReader(out)}
	tb.Cleanup(h.stop)
	line, err := h.out.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok {
		tb.Fatalf("helper %s did not start: %q %v", kind, line, err)
	}
	h.URL = "http://" + addr + "/mcp"
	return h
}

func (h *Helper) stop() {
	_ = h.in.Close()
	done := make(chan struct{})
	go func() { _ = h.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = h.Cmd.Process.Kill() // by pid: our own child
		<-done
	}
}

// RSSBytes returns the resident set size of process pid ("self" for us).
func RSSBytes(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// IDOf extracts the numeric id from a request body like
// {"jsonrpc":"2.0","id":12,...}.
func IDOf(body []byte) string {
	i := bytes.Index(body, []byte(`"id":`))
	if i < 0 {
		return "null"
	}
	j := i + len(`"id":`)
	k := j
	for k < len(body) && body[k] >= '0' && body[k] <= '9' {
		k++
	}
	return string(body[j:k])
}

// Reply answers every request with the given status, content type and
// body.
func Reply(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}
