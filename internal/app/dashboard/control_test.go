package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// post sends a scale request and returns the status and body.
func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"scale", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestControlNeedsAToken: on loopback without a token the page may watch
// but not steer.
func TestControlNeedsAToken(t *testing.T) {
	s, _ := startFake(t, Config{})
	s.Scalable(func(string, int, string) (rundir.ScaleChange, error) {
		t.Error("scaled without a token")
		return rundir.ScaleChange{}, nil
	}, []engine.ScaleTarget{{Name: "s", VUs: 1, MaxVUs: 4}})
	if code, body := post(t, s.URL(), "", `{"vus": 2}`); code != http.StatusForbidden || !strings.Contains(body, "--dashboard-token-file") {
		t.Errorf("scale without a token: %d %s", code, body)
	}
}

// TestControlScalesTheEngine: with a token, POST /scale changes a real
// engine's externally-controlled users; a bad request is refused with
// its reason and the run goes on; the page's state lists the change.
func TestControlScalesTheEngine(t *testing.T) {
	const tok = "0123456789abcdef-token"
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	p, err := scenariofile.Parse([]byte("scenarios:\n  s: {executor: externally-controlled, vus: 1, maxVUs: 4, duration: 3s, flow: [ping, think: 20ms]}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", TokenFile: tokenFile(t, tok)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, body := post(t, s.URL(), tok, `{"vus": 2}`); code != http.StatusConflict || !strings.Contains(body, "nothing to scale") {
		t.Errorf("scale before the load: %d %s", code, body)
	}
	done := make(chan *rundir.LoadResult, 1)
	go func() {
		res, err := engine.RunPlan(context.Background(), p, engine.RunOptions{Target: srv.URL, Watch: s})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	ch := stream(t, s.URL()+"events", http.Header{"Authorization": {"Bearer " + tok}})
	next(t, ch, "history")
	m := decode[tickMsg](t, next(t, ch, "tick"))
	if c := m.State.Control; c == nil || !c.Allowed || len(c.Scenarios) != 1 || c.Scenarios[0].MaxVUs != 4 {
		t.Fatalf("control on the page: %+v", c)
	}
	for _, bad := range []struct{ body, says string }{
		{`{"vus": 5}`, "maxVUs (4)"},
		{`{"vus": -1}`, "0 to maxVUs"},
		{`{"scenario": "x", "vus": 2}`, `no externally-controlled scenario "x"`},
		{`{"users": 2}`, "unknown field"},
		{`not json`, "want a JSON body"},
	} {
		if code, body := post(t, s.URL(), tok, bad.body); code < 400 || !strings.Contains(body, bad.says) {
			t.Errorf("POST %s: %d %q, want a refusal saying %q", bad.body, code, body, bad.says)
		}
	}
	if code, _ := post(t, s.URL(), "wrong-token-wrong-token", `{"vus": 3}`); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", code)
	}
	code, body := post(t, s.URL(), tok, `{"vus": 3, "by": "page"}`)
	if code != 200 {
		t.Fatalf("scale: %d %s", code, body)
	}
	var change rundir.ScaleChange
	if err := json.Unmarshal([]byte(body), &change); err != nil || change.From != 1 || change.To != 3 || change.By != "page" {
		t.Errorf("change %s (%v)", body, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := decode[tickMsg](t, next(t, ch, "tick"))
		if m.Point.Load.Users == 3 && len(m.State.Control.Changes) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed 3 users and the change: %+v %+v", m.Point.Load, m.State.Control)
		}
	}
	res := <-done
	if len(res.ScaleChanges) != 1 || res.ScaleChanges[0] != change || res.PeakUsers != 3 {
		t.Errorf("result: %+v, peak %d", res.ScaleChanges, res.PeakUsers)
	}
}
