//go:build linux

package h1

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// The request both clients (and wrk) send: the engine's tools/call, header
// for header, with the trace context it carries in a header and in
// params._meta (as scenarios/engine's BenchmarkEngineVsWrk sends it), so
// that the server does the same work for each and the comparison measures
// the clients.
const (
	benchTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	benchBody  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"` + benchTrace + `"},"name":"echo","arguments":{"text":"hello"}}}`
)

var benchHeaders = [][2]string{
	{"User-Agent", "leakbench/0.1.0"},
	{"Content-Type", "application/json"},
	{"Accept", "application/json, text/event-stream"},
	{"Mcp-Session-Id", "s-1"},
	{"Mcp-Protocol-Version", "2025-06-18"},
	{"Traceparent", benchTrace},
}

// benchPhase is what one client did in one stretch.
type benchPhase struct {
	reqs       int64
	wall       time.Duration
	cpu        time.Duration // this process's: the client alone
	serverCPU  time.Duration // the server process's
	mallocs    uint64
	conns      int64 // connections dialed (net/http's count; h1: -1, not counted)
	failures   int64
	firstError error
}

func (p *benchPhase) rate() float64 { return float64(p.reqs) / p.wall.Seconds() }
func (p *benchPhase) cpuPerReq() float64 {
	return float64(p.cpu.Nanoseconds()) / 1e3 / float64(p.reqs)
}
func (p *benchPhase) serverCPUPerReq() float64 {
	return float64(p.serverCPU.Nanoseconds()) / 1e3 / float64(p.reqs)
}

// maxPerUser bounds a user's requests in a stretch, besides its time.
const maxPerUser = 10_000_000

// measure runs users goroutines, each calling call(i) back to back for d
// (or maxPerUser times), and takes the process's CPU, allocations and the
// server's CPU around them. call returns an error to count a failure.
func measure(users int, d time.Duration, serverPid int, setup func(i int) func() error) benchPhase {
	calls := make([]func() error, users)
	for i := range calls {
		calls[i] = setup(i)
	}
	runtime.GC() // the last stretch's garbage is not charged to this one
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var p benchPhase
	var errOnce sync.Once
	var wg sync.WaitGroup
	start := make(chan struct{})
	t0, c0, s0 := time.Now(), procstat.Self(), procstat.Of(serverPid)
	end := t0.Add(d)
	for i := range users {
		wg.Go(func() {
			<-start
			var n, failed int64
			for ; n < maxPerUser && time.Now().Before(end); n++ {
				if err := calls[i](); err != nil {
					failed++
					errOnce.Do(func() { p.firstError = err })
					break // a user whose connection broke stops: its count is wrong from here
				}
			}
			atomic.AddInt64(&p.reqs, n)
			atomic.AddInt64(&p.failures, failed)
		})
	}
	close(start)
	wg.Wait()
	p.wall, p.cpu, p.serverCPU = time.Since(t0), procstat.Self()-c0, procstat.Of(serverPid)-s0
	runtime.ReadMemStats(&ms1)
	p.mallocs = ms1.Mallocs - ms0.Mallocs
	return p
}

// runH1 plays users, each with its own connection (a Slot), for d.
func runH1(u *url.URL, users int, d time.Duration, serverPid int) benchPhase {
	tr := New(u, 5*time.Second, 0, nil)
	var head []byte
	for _, h := range benchHeaders {
		head = append(head, h[0]+": "+h[1]+"\r\n"...)
	}
	body := []byte(benchBody)
	slots := make([]Slot, users)
	ctx := context.Background()
	errTimeout := errors.New("request timeout")
	p := measure(users, d, serverPid, func(i int) func() error {
		slot := &slots[i]
		return func() error {
			resp, _, err := tr.RoundTrip(ctx, slot, time.Now().Add(10*time.Second), errTimeout, http.MethodPost, head, body)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return err
		}
	})
	for i := range slots {
		slots[i].Close()
	}
	p.conns = -1
	return p
}

// runNetHTTP plays users, each with an http.Client over an http.Transport
// of its own, for d: one transport per user (MaxConnsPerHost 1) gives each
// exactly one keep-alive connection, as a Slot does, which the dial count
// checks. The client's Timeout bounds each request, as the engine's
// per-request deadline does; compression is off, as the engine asks for
// none.
func runNetHTTP(u *url.URL, users int, d time.Duration, serverPid int) benchPhase {
	var dials atomic.Int64
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	trs := make([]*http.Transport, users)
	target := u.String()
	body := []byte(benchBody)
	p := measure(users, d, serverPid, func(i int) func() error {
		tr := &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return dialer.DialContext(ctx, network, addr)
			},
			MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, IdleConnTimeout: 90 * time.Second,
			DisableCompression: true,
		}
		trs[i] = tr
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		return func() error {
			req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
			if err != nil {
				return err
			}
			for _, h := range benchHeaders {
				req.Header.Set(h[0], h[1])
			}
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return err
		}
	})
	for _, tr := range trs {
		tr.CloseIdleConnections()
	}
	p.conns = dials.Load()
	return p
}

// runWrkPhase runs wrk (two threads, users connections) with the same
// request for d, and returns its rate, as scenarios/engine's
// BenchmarkEngineVsWrk does.
func runWrkPhase(b *testing.B, target string, users int, d time.Duration) float64 {
	b.Helper()
	var script strings.Builder
	fmt.Fprintf(&script, "wrk.method = \"POST\"\nwrk.body = '%s'\n", benchBody)
	for _, h := range benchHeaders {
		fmt.Fprintf(&script, "wrk.headers[%q] = %q\n", h[0], h[1])
	}
	path := filepath.Join(b.TempDir(), "toolscall.lua")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	secs := max(1, int(d.Round(time.Second).Seconds()))
	out, err := exec.Command("wrk", "-t2", "-c"+strconv.Itoa(users), "-d"+strconv.Itoa(secs)+"s", "-s", path, target).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Requests/sec:\s+([\d.]+)`).FindSubmatch(out)
	if m == nil || strings.Contains(string(out), "Non-2xx") || strings.Contains(string(out), "Socket errors") {
		b.Fatalf("unexpected wrk output:\n%s", out)
	}
	rate, _ := strconv.ParseFloat(string(m[1]), 64)
	return rate
}

// BenchmarkTransportVsNetHTTP is the figure the package doc cites: this
// transport against net/http's, side by side in one run, each driving
// the engine's tools/call at a trivial MCP endpoint (mcptest's canned
// one, a net/http server in a child process, on 127.0.0.1) with a
// connection per user, users sending back to back; wrk with as many
// connections on the same endpoint gives the rate the endpoint allows
// (skipped without wrk). Each stretch lasts LEAKBENCH_H1_SECONDS (3);
// two rounds, the order reversed in the second, are averaged. Reported
// per client: req/s, cpu-µs/req (this process's CPU, the client alone:
// the server runs apart), allocs/req, and the server's cpu-µs/req (the
// same work for each: a difference in rate is the client's); and the
// ratios h1/nethttp (rate), h1/nethttp-cpu (CPU per request) and each
// rate over wrk's.
func BenchmarkTransportVsNetHTTP(b *testing.B) {
	secs := 3
	if v, err := strconv.Atoi(os.Getenv("LEAKBENCH_H1_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	d := time.Duration(secs) * time.Second
	_, wrkErr := exec.LookPath("wrk")
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	pid := h.Cmd.Process.Pid
	u, err := url.Parse(h.URL)
	if err != nil {
		b.Fatal(err)
	}
	for _, users := range []int{64, 256} {
		b.Run("users="+strconv.Itoa(users), func(b *testing.B) {
			for b.Loop() {
				var h1p, nhp []benchPhase
				var wrk float64
				for round := range 2 {
					steps := []func(){
						func() { h1p = append(h1p, runH1(u, users, d, pid)) },
						func() { nhp = append(nhp, runNetHTTP(u, users, d, pid)) },
						func() {
							if wrkErr == nil {
								wrk += runWrkPhase(b, h.URL, users, d) / 2
							}
						},
					}
					if round == 1 {
						steps[0], steps[2] = steps[2], steps[0]
					}
					for _, step := range steps {
						step()
					}
				}
				for _, p := range append(h1p, nhp...) {
					if p.failures != 0 || p.reqs == 0 {
						b.Fatalf("%d failures in %d requests: %v", p.failures, p.reqs, p.firstError)
					}
				}
				// net/http now and then dials a user's connection again
				// (one in about three stretches, one connection): a few
				// are let pass, more would not be a connection per user.
				for _, p := range nhp {
					if p.conns < int64(users) || p.conns > int64(users+users/16) {
						b.Fatalf("net/http dialed %d connections for %d users", p.conns, users)
					}
				}
				h1r, nhr := avg(h1p, (*benchPhase).rate), avg(nhp, (*benchPhase).rate)
				h1c, nhc := avg(h1p, (*benchPhase).cpuPerReq), avg(nhp, (*benchPhase).cpuPerReq)
				b.ReportMetric(h1r, "h1-req/s")
				b.ReportMetric(nhr, "nethttp-req/s")
				b.ReportMetric(h1r/nhr, "h1/nethttp")
				b.ReportMetric(h1c, "h1-cpu-µs/req")
				b.ReportMetric(nhc, "nethttp-cpu-µs/req")
				b.ReportMetric(h1c/nhc, "h1/nethttp-cpu")
				b.ReportMetric(avg(h1p, allocsPerReq), "h1-allocs/req")
				b.ReportMetric(avg(nhp, allocsPerReq), "nethttp-allocs/req")
				b.ReportMetric(avg(nhp, func(p *benchPhase) float64 { return float64(p.conns) / float64(users) }), "nethttp-dials/user")
				b.ReportMetric(avg(h1p, (*benchPhase).serverCPUPerReq), "h1-server-cpu-µs/req")
				b.ReportMetric(avg(nhp, (*benchPhase).serverCPUPerReq), "nethttp-server-cpu-µs/req")
				if wrk > 0 {
					b.ReportMetric(wrk, "wrk-req/s")
					b.ReportMetric(h1r/wrk, "h1/wrk")
					b.ReportMetric(nhr/wrk, "nethttp/wrk")
				}
			}
		})
	}
}

func allocsPerReq(p *benchPhase) float64 { return float64(p.mallocs) / float64(p.reqs) }

func avg(ps []benchPhase, f func(*benchPhase) float64) float64 {
	s := 0.0
	for i := range ps {
		s += f(&ps[i])
	}
	return s / float64(len(ps))
}
