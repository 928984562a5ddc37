package mcptest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

var elicit = map[string]any{"elicitation": map[string]any{}}

// TestInputRequired: ask answers input_required with an elicitation and
// a requestState; the retry with the state echoed and the user's answer
// completes it; a state altered, missing or presented for another
// request is refused with -32602; without the elicitation capability the
// request is refused with -32021.
func TestInputRequired(t *testing.T) {
	for _, sseOn := range []bool{false, true} {
		s, url := start(t, Options{DualEra: true, SSE: sseOn})
		ask := map[string]any{"name": "ask", "arguments": map[string]any{}}

		a := call2026(t, url, "tools/call", ask, noCaps)
		wantError(t, a, http.StatusBadRequest, -32021, "elicitation")
		if string(a.msg.Error.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
			t.Fatalf("-32021 data %s", a.msg.Error.Data)
		}

		a = call2026(t, url, "tools/call", ask, elicit)
		r := a.msg.Result
		state, _ := r["requestState"].(string)
		reqs, _ := json.Marshal(r["inputRequests"])
		if r["resultType"] != "input_required" || state == "" || r["ttlMs"] != nil ||
			string(reqs) != `{"user_name":{"method":"elicitation/create","params":{"message":"What is your name?","mode":"form","requestedSchema":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}}}}` {
			t.Fatalf("input_required: %s", a.raw)
		}
		if again := call2026(t, url, "tools/call", ask, elicit); again.msg.Result["requestState"] == state {
			t.Error("two input_required results share a requestState")
		}

		retry := func(state any, responses any) answer {
			p := map[string]any{"name": "ask", "arguments": map[string]any{}}
			if state != nil {
				p["requestState"] = state
			}
			if responses != nil {
				p["inputResponses"] = responses
			}
			return post(t, url, modernHeaders("tools/call", p), modernBody(2, "tools/call", p, elicit))
		}
		accept := map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
		a = retry(state, accept)
		if a.status != http.StatusOK || a.msg.Result["resultType"] != "complete" || text(t, a.msg.Result) != "Hello, Ada!" {
			t.Fatalf("retry: %s", a.raw)
		}
		if s.InputRequired() != 2 || s.InputCompleted() != 1 {
			t.Errorf("counters %d %d", s.InputRequired(), s.InputCompleted())
		}

		wantError(t, retry(state[:len(state)-2]+"xx", accept), http.StatusOK, -32602, "not one this server issued")
		wantError(t, retry(nil, accept), http.StatusOK, -32602, "without requestState")
		// Without the response the server asks again.
		if a := retry(state, nil); a.msg.Result["resultType"] != "input_required" {
			t.Fatalf("retry without inputResponses: %s", a.raw)
		}
		if a := retry(state, map[string]any{"user_name": map[string]any{"action": "decline"}}); a.msg.Result["isError"] != true {
			t.Fatalf("declined: %s", a.raw)
		}

		// prompts/get ask_prompt: the same round trip; its state is not
		// the tool's.
		pp := map[string]any{"name": "ask_prompt"}
		a = call2026(t, url, "prompts/get", pp, elicit)
		pstate, _ := a.msg.Result["requestState"].(string)
		if a.msg.Result["resultType"] != "input_required" || pstate == "" {
			t.Fatalf("prompts/get: %s", a.raw)
		}
		wantError(t, retry(pstate, accept), http.StatusOK, -32602, "was issued for prompts/get ask_prompt")
		pp["requestState"], pp["inputResponses"] = pstate, accept
		a = call2026(t, url, "prompts/get", pp, elicit)
		b, _ := json.Marshal(a.msg.Result["messages"])
		if !strings.Contains(string(b), "Hello, Ada!") {
			t.Fatalf("prompts/get retry: %s", a.raw)
		}
	}
}
