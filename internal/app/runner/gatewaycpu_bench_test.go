package runner

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// BenchmarkEngineOnGateway plays the incident profile's load — 3,000
// users (LEAKBENCH_GATEWAY_USERS), think 0.2–1.0 s, the ContextForge mix —
// against the reference gateway (fixed) serving a local PostgreSQL and
// PgBouncer from a process of its own (leakbench gateway), so that this
// process's CPU is the engine's alone, and reports the engine's cores
// while every user is active beside the gateway's and the request rate.
// The stack, the gateway and the engine share this machine's cores: on 2
// cores the gateway saturates and its answers slow down, which is the
// incident's own picture. Slow, not wrong: a run that errored, or whose
// requests failed beyond maxGatewayErrorRate, measured the cost of
// failing (a refused token, a gateway down, timeouts), not of the load,
// and fails the benchmark instead of reporting its cores.
func BenchmarkEngineOnGateway(b *testing.B) {
	users := 3000
	if n, err := strconv.Atoi(os.Getenv("LEAKBENCH_GATEWAY_USERS")); err == nil && n > 0 {
		users = n
	}
	const ramp, hold = 20 * time.Second, 20 * time.Second
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("go toolchain not on PATH: the gateway runs as a leakbench binary built here")
	}
	p, err := profiles.Lookup("incident")
	if err != nil {
		b.Fatal(err)
	}
	stack := p.Stack
	stack.NoGateway, stack.Users = true, users
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := fixtures.StartLocal(ctx, stack)
	b.Cleanup(func() { env.Close() }) // a partial Env too (StartLocal's contract)
	if errors.Is(err, fixtures.ErrMissingBinary) {
		b.Skipf("PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "leakbench")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/leakbench").CombinedOutput(); err != nil {
		b.Fatalf("build leakbench: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	gw := exec.Command(bin, "gateway", "--listen", addr, "--variant", "fixed", "--pool-size", "60")
	gw.Env = append(os.Environ(), "LEAKBENCH_GATEWAY_DSN="+env.AppDSN) // not in argv, where ps would show it
	gw.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := gw.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = gw.Process.Signal(syscall.SIGTERM); _ = gw.Wait() }()
	for i := 0; ; i++ {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 100 {
			b.Fatal("the gateway did not come up")
		}
		time.Sleep(100 * time.Millisecond)
	}
	pl := *p.Plan
	pl.Target = "http://" + addr + "/mcp"
	sc := pl.Scenarios[0]
	sc.Stages = []plan.Stage{{Duration: plan.Duration(ramp), Target: users}, {Duration: plan.Duration(hold + time.Hour), Target: users}}
	pl.Scenarios = []plan.Scenario{sc}
	type outcome struct {
		res *rundir.LoadResult
		err error
	}
	for b.Loop() {
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan outcome, 1)
		gStart := procstat.Of(gw.Process.Pid)
		go func() {
			res, err := engine.RunPlan(runCtx, &pl, engine.RunOptions{Target: pl.Target, Tokens: env.Tokens})
			done <- outcome{res, err}
		}()
		time.Sleep(ramp + 2*time.Second) // everyone in
		t0, c0, g0 := time.Now(), procstat.Self(), procstat.Of(gw.Process.Pid)
		time.Sleep(hold)
		t1, c1, g1 := time.Now(), procstat.Self(), procstat.Of(gw.Process.Pid)
		stop()
		o := <-done
		if o.err != nil || o.res == nil {
			b.Fatalf("the run failed: %v", o.err)
		}
		res := o.res
		gEnd := procstat.Of(gw.Process.Pid)
		wall := t1.Sub(t0).Seconds()
		b.ReportMetric(float64(users), "users")
		b.ReportMetric((c1-c0).Seconds()/wall, "engine-cores")
		b.ReportMetric((g1-g0).Seconds()/wall, "gateway-cores")
		b.ReportMetric(float64(res.Requests)/res.Ended.Sub(res.Started).Seconds(), "req/s")
		// The gateway's CPU per request over the whole run, ramp
		// included: what serving one request costs it, whatever the
		// rate the machine allowed.
		b.ReportMetric(float64((gEnd-gStart).Microseconds())/float64(max(res.Requests, 1)), "gateway-µs-cpu/req")
		// Stopping the run abandons the requests in flight: kind
		// "canceled", which Failures leaves out.
		rate := float64(res.Failures) / float64(max(res.Requests, 1))
		b.ReportMetric(float64(res.Failures), "failures")
		b.ReportMetric(rate, "error-rate")
		b.ReportMetric(float64(res.AbortedUsers), "aborted-users")
		switch {
		case res.Requests == 0:
			b.Fatal("the run sent no request")
		case rate > maxGatewayErrorRate || res.AbortedUsers > 0:
			b.Fatalf("%d of %d requests failed (%.2f%%, at most %.0f%%), %d users gave up: %v",
				res.Failures, res.Requests, 100*rate, 100*maxGatewayErrorRate, res.AbortedUsers, nonZero(res.ErrorsByKind))
		}
	}
}

// maxGatewayErrorRate bounds the failed requests of a run the benchmark
// reports: a saturated gateway answers late (the incident profile waits
// 30 s for an answer), so failures beyond a few stray ones mean something
// else went wrong.
const maxGatewayErrorRate = 0.01

// nonZero is the kinds of errors that occurred.
func nonZero(kinds map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, n := range kinds {
		if n > 0 {
			out[k] = n
		}
	}
	return out
}
