package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestShardPlan: the plan the shard containers get parses back to the
// scenario's headers as written — the plan's and an http step's in a
// choose branch, credential-like or not — without tokens, while the
// plan's own JSON (run directories) still masks them.
func TestShardPlan(t *testing.T) {
	const scen = `
tokens: [lbt_0123456789abcdef]
headers: {X-Api-Key: "k3y \"quoted\"", X-Team: blue, Cookie: "sid=c00kie"}
scenarios:
  a:
    executor: constant-vus
    vus: 2
    duration: 3s
    flow:
      - ping
      - choose:
          - weight: 1
            steps:
              - http: {url: /api, headers: {Authorization-Token: "t0k", Accept-Language: en}}
`
	p, err := scenariofile.Parse([]byte(scen), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := shardPlan(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "lbt_0123456789abcdef") || strings.Contains(string(raw), redact.Mask) || strings.Contains(string(raw), "x-lb-") {
		t.Errorf("the shards' plan holds a token, a mask or a placeholder:\n%s", raw)
	}
	q, err := scenariofile.Parse(raw, "shard.yaml")
	if err != nil {
		t.Fatalf("the shards' plan does not parse: %v\n%s", err, raw)
	}
	if len(q.Headers) != 3 || q.Headers["X-Api-Key"] != `k3y "quoted"` || q.Headers["Cookie"] != "sid=c00kie" || q.Headers["X-Team"] != "blue" {
		t.Errorf("headers %q", q.Headers)
	}
	h := q.Scenarios[0].Flow[1].Choices[0].Steps[0].HTTP
	if h == nil || h.Headers["Authorization-Token"] != "t0k" || h.Headers["Accept-Language"] != "en" || len(h.Headers) != 2 {
		t.Errorf("http step %+v", h)
	}
	if len(q.Tokens) != 0 {
		t.Errorf("tokens %d", len(q.Tokens))
	}
	// The run directories' encoding, and the plan itself, are as before.
	rec, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rec), "c00kie") || strings.Contains(string(rec), "t0k") || p.Headers["X-Api-Key"] != `k3y "quoted"` {
		t.Errorf("the recorded plan is not masked, or the plan was changed:\n%s", rec)
	}
}
