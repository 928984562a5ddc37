package workers_test

import (
	"errors"
	"net/netip"
	"runtime"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/app/workers"
)

func usersPlan(t *testing.T, users string, listen bool) string {
	t.Helper()
	l := ""
	if listen {
		l = "\n    listen: true"
	}
	return `
scenarios:
  s:
    executor: constant-vus
    vus: ` + users + `
    duration: 10s` + l + `
    flow: [ping]
`
}

// TestBudget: a plan that does not fit this machine's limits is refused
// before any load, with the numbers; one that fits is laid out.
func TestBudget(t *testing.T) {
	small := workers.Limits{OpenFiles: 1000, PortLow: 40000, PortHigh: 40999} // 936 connections a worker, 1,000 ports
	for _, tc := range []struct {
		name, target string
		users        string
		listen       bool
		cfg          workers.Config
		want         []string // in the error; none: fits
	}{
		{name: "fits", target: "http://127.0.0.1:8080/mcp", users: "900", cfg: workers.Config{Count: 1}},
		{name: "files", target: "http://127.0.0.1:8080/mcp", users: "2000", cfg: workers.Config{Count: 2},
			want: []string{"worker 0/2 needs up to 1000 connections (1000 users", "may open 1000 files", "64 kept", "--workers 3 or more", "ulimit -n"}},
		{name: "listen doubles", target: "http://127.0.0.1:8080/mcp", users: "600", listen: true, cfg: workers.Config{Count: 1},
			want: []string{"needs up to 1200 connections (600 users, a listen user has two)"}},
		{name: "listen over two workers", target: "http://127.0.0.1:8080/mcp", users: "600", listen: true, cfg: workers.Config{Count: 2}},
		{name: "ports of one address", target: "http://10.1.2.3:8080/mcp", users: "1800", cfg: workers.Config{Count: 2},
			want: []string{"1800 connections from one source address", "1000 local ports (ip_local_port_range 40000–40999)", "2 or more local addresses"}},
		{name: "loopback spreads", target: "http://127.0.0.1:8080/mcp", users: "1800", cfg: workers.Config{Count: 2}},
		{name: "loopback sources, remote target", target: "http://10.1.2.3:8080/mcp", users: "10",
			cfg:  workers.Config{Count: 2, SourceAddrs: mustAddrs(t, "127.0.0.9")},
			want: []string{"127.0.0.9 is a loopback address, from which 10.1.2.3 cannot be reached"}},
		{name: "ports of given addresses", target: "http://localhost:8080/mcp", users: "1800",
			cfg:  workers.Config{Count: 2, SourceAddrs: mustAddrs(t, "127.0.0.9")},
			want: []string{"1800 connections from 1 source addresses, 1000 local ports each", "2 or more"}},
		{name: "more workers than users", target: "http://127.0.0.1:8080/mcp", users: "3", cfg: workers.Config{Count: 4},
			want: []string{"--workers 4: the plan has 3 user(s) at most"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lay, err := workers.NewLayout(parse(t, usersPlan(t, tc.users, tc.listen)), tc.cfg, tc.target, small)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				for i, nd := range lay.Needs {
					if got := len(lay.Sources.PerWorker[i]) * small.Ports(); lay.Sources.From != "" && nd.Conns > got {
						t.Errorf("worker %d: %d connections over %d ports", i, nd.Conns, got)
					}
				}
				return
			}
			if !errors.Is(err, workers.ErrBadInput) {
				t.Fatalf("error %v; want bad input", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestAutoCount: auto is one worker per core, more when one worker's
// users would not fit its open files.
func TestAutoCount(t *testing.T) {
	small := workers.Limits{OpenFiles: 1000, PortLow: 40000, PortHigh: 40999}
	lay, err := workers.NewLayout(parse(t, usersPlan(t, "100", false)), workers.Config{Auto: true}, "http://127.0.0.1:1/mcp", small)
	if err != nil || lay.Count != min(runtime.NumCPU(), 100) {
		t.Fatalf("100 users: %v workers, %v; want one per core", lay, err)
	}
	lay, err = workers.NewLayout(parse(t, usersPlan(t, "5000", true)), workers.Config{Auto: true}, "http://127.0.0.1:1/mcp", small)
	if err != nil || lay.Count < 11 { // 10,000 connections, 936 a worker
		t.Fatalf("5000 listen users: %+v, %v; want 11 workers or more", lay, err)
	}
}

// TestBadInput: --workers 0, a word, and a source address not of this
// machine are refused with the reason.
func TestBadInput(t *testing.T) {
	for _, s := range []string{"0", "-2", "many"} {
		if _, err := workers.ParseCount(s); !errors.Is(err, workers.ErrBadInput) || !strings.Contains(err.Error(), "--workers") {
			t.Errorf("--workers %s: %v", s, err)
		}
	}
	if c, err := workers.ParseCount("auto"); err != nil || !c.Auto {
		t.Errorf("auto: %+v, %v", c, err)
	}
	// 192.0.2.0/24 is TEST-NET-1: no machine's own.
	if _, err := workers.ParseSourceAddrs("127.0.0.2,192.0.2.7"); !errors.Is(err, workers.ErrBadInput) || !strings.Contains(err.Error(), "192.0.2.7 is not an address of this machine") {
		t.Errorf("non-local: %v", err)
	}
	if _, err := workers.ParseSourceAddrs("127.0.0.300"); !errors.Is(err, workers.ErrBadInput) {
		t.Errorf("not an address: %v", err)
	}
	if a, err := workers.ParseSourceAddrs("127.0.0.2, 127.0.0.3,127.0.0.2"); err != nil || len(a) != 2 {
		t.Errorf("loopback: %v, %v", a, err)
	}
}

func mustAddrs(t *testing.T, s string) []netip.Addr {
	t.Helper()
	a, err := workers.ParseSourceAddrs(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestUpToUsers: a plan with fewer users than workers asked gets one
// worker per user when the caller allows it (capacity's small stages).
func TestUpToUsers(t *testing.T) {
	lim := workers.Limits{OpenFiles: 1000, PortLow: 40000, PortHigh: 40999}
	lay, err := workers.NewLayout(parse(t, usersPlan(t, "3", false)), workers.Config{Count: 8, UpToUsers: true}, "http://127.0.0.1:1/mcp", lim)
	if err != nil || lay.Count != 3 {
		t.Fatalf("3 users, 8 workers up to users: %+v, %v; want 3 workers", lay, err)
	}
}
