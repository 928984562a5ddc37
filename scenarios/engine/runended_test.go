package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A run ends only after everything it started has ended: RunPlan returns
// once every user's goroutine, notification stream and connection is
// closed. The helpers here check that guarantee at the instant RunPlan
// returns, without waiting, from the client's side where it is
// synchronous:
//   - no goroutine of the engine's packages is left (a goroutine stack
//     naming scenarios/engine, scenarios/mcp or scenarios/internal/h1);
//   - no socket of this process to the target's port is still
//     ESTABLISHED (read from /proc/net/tcp): a connection the client
//     closed is in FIN_WAIT or gone, whatever the server has yet noticed.
// The server notices a closed connection only when its own read or
// write sees it, so what the server counts is checked separately and
// eventually (serverSees), within a bound.

// enginePackages are the stack frames that belong to a run.
var enginePackages = []string{
	"leakbench/scenarios/engine.",
	"leakbench/scenarios/mcp.",
	"leakbench/scenarios/internal/h1.",
}

// engineGoroutines returns the stacks of goroutines running engine code,
// other than the caller's.
func engineGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue // this goroutine, the test's own
		}
		s := string(g)
		// A test function's own frames (…engine.TestX, helpers of
		// _test.go files) are not the run's.
		if strings.Contains(s, "testing.tRunner") && !strings.Contains(s, "created by github.com/leakbench/leakbench/scenarios/") {
			continue
		}
		for _, p := range enginePackages {
			if strings.Contains(s, p) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// establishedTo counts this process's TCP sockets whose remote end is
// port on the loopback, in state ESTABLISHED (IPv4 and IPv6 tables).
func establishedTo(t testing.TB, port int) int {
	t.Helper()
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatalf("read the socket table: %v", err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 {
				continue
			}
			_, remPort, ok := strings.Cut(fields[2], ":")
			p, err := strconv.ParseInt(remPort, 16, 32)
			if ok && err == nil && int(p) == port && fields[3] == "01" {
				n++
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
	}
	return n
}

// portOf is the port of a target URL such as http://127.0.0.1:1234/mcp.
func portOf(t testing.TB, target string) int {
	t.Helper()
	rest := strings.TrimPrefix(strings.TrimPrefix(target, "http://"), "https://")
	host, _, _ := strings.Cut(rest, "/")
	_, p, err := net.SplitHostPort(host)
	if err != nil {
		t.Fatalf("target %q has no port: %v", target, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("target %q: %v", target, err)
	}
	return port
}

// assertRunEnded checks, right after RunPlan returned and without
// waiting, that the run left no engine goroutine and no open connection
// to target.
func assertRunEnded(t testing.TB, target string) {
	t.Helper()
	if gs := engineGoroutines(); len(gs) != 0 {
		t.Errorf("RunPlan returned with %d engine goroutines still running; the first:\n%s", len(gs), gs[0])
	}
	if n := establishedTo(t, portOf(t, target)); n != 0 {
		t.Errorf("RunPlan returned with %d connections to the target still established", n)
	}
}

// serverSees waits, up to a bound, for what the server counts to reach
// zero: the server learns of a closed connection only when it next reads
// or writes, a few milliseconds after the client closed it.
func serverSees(t testing.TB, what string, count func() int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for count() != 0 {
		if time.Now().After(deadline) {
			t.Errorf("%d %s still open at the server 5 s after the run ended", count(), what)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRunEndedHelpersCanFail: the checks above see a connection that is
// still open and a goroutine that is still running, so that passing them
// means something.
func TestRunEndedHelpersCanFail(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := fmt.Sprintf("http://%s/mcp", ln.Addr())
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := establishedTo(t, portOf(t, target)); n != 1 {
		t.Errorf("an open connection: counted %d established, want 1", n)
	}
	c.Close()
	if n := establishedTo(t, portOf(t, target)); n != 0 {
		t.Errorf("a closed connection: counted %d established, want 0", n)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); sleepCtxForTest(stop) }()
	if gs := engineGoroutines(); len(gs) == 0 {
		t.Errorf("a goroutine running engine code was not seen")
	}
	close(stop)
	<-done
	if gs := engineGoroutines(); len(gs) != 0 {
		t.Errorf("after it ended, still seen:\n%s", gs[0])
	}
}

// sleepCtxForTest stands for engine code that runs until stopped.
//
//go:noinline
func sleepCtxForTest(stop chan struct{}) { <-stop }
