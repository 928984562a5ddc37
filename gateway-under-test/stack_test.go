package gateway_test

// Helpers of the integration tests: a real stack (on the package's shared
// PostgreSQL: TestMain is pgshared.Run), go-sdk
// clients with bearer tokens, a pg_stat_activity sampler that tracks
// idle-in-transaction episodes the way leakbench's probes do, and a
// /metrics scraper.

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leakbench/leakbench/fixtures"
	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/gateway-under-test/upstream"
	"github.com/leakbench/leakbench/internal/testing/pgshared"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

func TestMain(m *testing.M) { pgshared.Run(m) }

func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL and PgBouncer")
	}
}

// startStack starts a stack as cfg says, with small defaults fit for a
// shared 2-core machine, on the package's shared PostgreSQL (pgshared): a
// database of its own with cfg's idle_in_transaction_session_timeout, its
// own PgBouncer, upstream and gateway. It skips when the servers are not
// installed.
func startStack(t testing.TB, cfg stack.Config) *fixtures.Env {
	t.Helper()
	skipShort(t)
	if cfg.Users == 0 {
		cfg.Users = 20
	}
	if cfg.GatewayPoolSize == 0 {
		cfg.GatewayPoolSize = 10
	}
	if cfg.PgBouncerPoolSize == 0 {
		cfg.PgBouncerPoolSize = 10
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return pgshared.Start(t, ctx, cfg)
}

// startGateway starts one more gateway (and, when cfg names none, an
// upstream for it) on a stack started with NoGateway.
func startGateway(t testing.TB, env *fixtures.Env, cfg gateway.Config) *gateway.Gateway {
	t.Helper()
	ctx := context.Background()
	if cfg.UpstreamURL == "" {
		up := startUpstream(t, upstream.Config{})
		cfg.UpstreamURL = up.URL()
	}
	cfg.DSN = env.AppDSN
	cfg.Listen = "127.0.0.1:0"
	gw, err := gateway.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	t.Cleanup(func() {
		if err := gw.Close(context.Background()); err != nil {
			t.Errorf("close gateway: %v", err)
		}
	})
	return gw
}

func startUpstream(t testing.TB, cfg upstream.Config) *upstream.Server {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	up, err := upstream.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start upstream: %v", err)
	}
	t.Cleanup(func() { _ = up.Close(context.Background()) })
	return up
}

// connect opens an MCP session as the given token with go-sdk's client.
// legacyVersion is the handshake-era version the tests' go-sdk clients
// pin, unless a test is about the 2026-07-28 era: go-sdk's client speaks
// 2026-07-28 by default, and the gateway serves it.
const legacyVersion = "2025-11-25"

// connect opens a 2025-era session (legacyVersion) for token with go-sdk's
// client.
func connect(t testing.TB, ctx context.Context, url, token string) *mcp.ClientSession {
	t.Helper()
	return connectVersion(t, ctx, url, token, legacyVersion)
}

// connectVersion connects go-sdk's client asking for version (see dial),
// and checks that it speaks that version.
func connectVersion(t testing.TB, ctx context.Context, url, token, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := dial(ctx, url, token, version)
	if err != nil {
		t.Fatalf("connect MCP client (protocol %q): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	want := version
	if want == "" {
		want = modernVersion
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("go-sdk's client speaks protocol %s, want %s", got, want)
	}
	return cs
}

// modernVersion is the sessionless revision go-sdk's client speaks by
// default.
const modernVersion = "2026-07-28"

// dial connects go-sdk's client asking for version: a 2025 version does
// the handshake, "" (go-sdk's default, 2026-07-28) discovers.
func dial(ctx context.Context, url, token, version string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "leakbench-test", Version: "0"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           &http.Client{Transport: bearerTransport{token: token}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1, // a failed request is a result here, not something to hide
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
}

// callText calls a tool and returns its result (or the call's error).
func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// resultText is the text of a tool result's first content.
func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// minSignatureSpan is the shortest idle-in-transaction span the tests count
// as a held session. Every leak signature here is a second or more; on a
// loaded 2-core machine a healthy BEGIN→query gap can reach a few hundred
// milliseconds, so a tighter line would flag the fixed variant by chance.
const minSignatureSpan = 500 * time.Millisecond

// episode is one span during which a backend sat idle in transaction.
type episode struct {
	pid      int
	query    string
	start    time.Time // pg_stat_activity.state_change
	lastSeen time.Time
	end      time.Time // first sample that no longer showed it; zero while open
	killed   bool      // the backend itself was gone: terminated, not released
}

func (e *episode) hold() time.Duration {
	if e.end.IsZero() {
		return e.lastSeen.Sub(e.start)
	}
	return e.end.Sub(e.start)
}

// sampler polls pg_stat_activity, as leakbench's probe does: one
// connection, autocommit reads (a fresh snapshot each time).
type sampler struct {
	mu       sync.Mutex
	episodes map[[2]int64]*episode // key: pid, state_change
	states   []map[string]int      // per sample: backends by state
	stop     context.CancelFunc
	done     chan struct{}
}

const sqlActivity = `SELECT pid, coalesce(state, ''), query, coalesce(state_change, now()), clock_timestamp()
FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`

func startSampler(t testing.TB, env *fixtures.Env, every time.Duration) *sampler {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, env.ProbeDSN)
	if err != nil {
		cancel()
		t.Fatalf("connect sampler: %v", err)
	}
	s := &sampler{episodes: map[[2]int64]*episode{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer conn.Close(context.Background())
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			if err := s.sample(ctx, conn, env.Database); err != nil && ctx.Err() == nil {
				t.Errorf("sample pg_stat_activity: %v", err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *sampler) sample(ctx context.Context, conn *pgx.Conn, db string) error {
	rows, err := conn.Query(ctx, sqlActivity, db)
	if err != nil {
		return err
	}
	var pid int
	var state, query string
	var change, now time.Time
	states := map[string]int{}
	seen := map[[2]int64]bool{}
	pids := map[int]bool{}
	_, err = pgx.ForEachRow(rows, []any{&pid, &state, &query, &change, &now}, func() error {
		states[state]++
		pids[pid] = true
		if strings.HasPrefix(state, "idle in transaction") {
			k := [2]int64{int64(pid), change.UnixNano()}
			seen[k] = true
			s.mu.Lock()
			e := s.episodes[k]
			if e == nil {
				e = &episode{pid: pid, query: query, start: change}
				s.episodes[k] = e
			}
			e.lastSeen = now
			s.mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states = append(s.states, states)
	for k, e := range s.episodes {
		if e.end.IsZero() && !seen[k] {
			e.end = time.Now()
			e.killed = !pids[e.pid]
		}
	}
	return nil
}

func (s *sampler) close() {
	s.stop()
	<-s.done
}

// Episodes returns the episodes seen so far that lasted at least min.
func (s *sampler) Episodes(min time.Duration) []episode {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []episode
	for _, e := range s.episodes {
		if e.hold() >= min {
			out = append(out, *e)
		}
	}
	return out
}

// MaxState is the most backends seen in a state at one sample.
func (s *sampler) MaxState(state string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := 0
	for _, st := range s.states {
		m = max(m, st[state])
	}
	return m
}

// scrape reads a Prometheus text endpoint into series → value, the series
// named as exposed (name{labels}).
func scrape(t testing.TB, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return out
}

// idleTimeoutKills counts PostgreSQL's FATALs for
// idle_in_transaction_session_timeout (SQLSTATE 25P03) of the stack's
// database in the server's log.
func idleTimeoutKills(t testing.TB, env *fixtures.Env) int {
	t.Helper()
	return pgshared.IdleInTxKills(t, env)
}

// waitFor polls cond every 50 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
