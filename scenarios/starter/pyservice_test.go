package starter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/examples/pyservice"
	"github.com/leakbench/leakbench/fixtures/fixturetest"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestInitPythonService: against the Python example service (FastAPI,
// hand-written JSON-RPC, schemas with a type list and no required
// properties, a tool that fails without the run id only another tool
// gives), init writes a file that plays with no failure.
func TestInitPythonService(t *testing.T) {
	t.Parallel() // waits on servers, not on the CPU
	if testing.Short() {
		t.Skip("starts PostgreSQL and a Python service")
	}
	if _, err := pyservice.Check(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := fixturetest.StartLocal(t, ctx, stack.Config{NoGateway: true, Users: 1})
	dsn, err := pyservice.CreateDatabase(ctx, env.PostgresDSN, "pyservice")
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := pyservice.Seed(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := pyservice.Start(ctx, pyservice.Options{DSN: dsn, PoolSize: 4, WaitDefault: time.Second})
	if errors.Is(err, pyservice.ErrMissing) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("service log:\n%s", svc.Log())
		}
	})
	res, err := Init(ctx, Options{Target: svc.URL, Token: tokens[0], TryCalls: true, Timeout: 5 * time.Second, ProbeDSN: env.ProbeDSN})
	if err != nil {
		t.Fatal(err)
	}
	defer writeDebug(t, "starter-pyservice.yaml", res.YAML)
	if testing.Verbose() {
		t.Logf("%s", res.YAML)
	}
	if len(res.Service.Tools) != 4 || !branchOn(res.YAML, "whoami") {
		t.Errorf("tools %+v; want its 4, whoami played", res.Service.Tools)
	}
	if !strings.Contains(string(res.YAML), pyservice.ApplicationName) {
		t.Errorf("the file does not name the service's application_name %q among the sessions seen", pyservice.ApplicationName)
	}
	playStarter(t, res.YAML, svc.URL, tokens[:1])
}
