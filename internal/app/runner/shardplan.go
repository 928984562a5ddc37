package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// shardPlan encodes p for the shard containers, in the scenario file's
// shape as the plan's JSON is, but with what the shards must send as
// written: the plan's JSON (for run directories) masks the values of
// credential-like headers (X-Api-Key, Cookie, …), and a shard playing the
// mask would send "xxxxx". Tokens and the tokens file stay out (the shards
// get --tokens-file), and so does the target (--target).
//
// The encoding is the plan's own, so that the two cannot drift: each
// header name is swapped for a placeholder the mask leaves alone before
// encoding, and swapped back in the JSON text after. The result holds
// secrets: it goes into the shard containers only (mode 0600), never into
// a run directory or a log.
func shardPlan(p *plan.Plan) ([]byte, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("encode the plan for the shards: %w", err)
	}
	names := map[string]string{} // placeholder → header name
	rename := func(h map[string]string) map[string]string {
		if len(h) == 0 {
			return h
		}
		out := make(map[string]string, len(h))
		for k, v := range h {
			// Hex digits and "x-lb-": no word the mask looks for.
			ph := fmt.Sprintf("x-lb-%s-%d", hex.EncodeToString(nonce[:]), len(names))
			names[ph] = k
			out[ph] = v
		}
		return out
	}
	var steps func([]plan.Step) []plan.Step
	steps = func(in []plan.Step) []plan.Step {
		out := make([]plan.Step, len(in))
		for i, st := range in {
			if st.HTTP != nil {
				h := *st.HTTP
				h.Headers = rename(h.Headers)
				st.HTTP = &h
			}
			if st.Choices != nil {
				cs := make([]plan.Choice, len(st.Choices))
				for j, c := range st.Choices {
					c.Steps = steps(c.Steps)
					cs[j] = c
				}
				st.Choices = cs
			}
			out[i] = st
		}
		return out
	}
	q := *p
	q.Target, q.Tokens, q.TokensFile = "", nil, ""
	q.Headers = rename(p.Headers)
	q.Scenarios = make([]plan.Scenario, len(p.Scenarios))
	for i, s := range p.Scenarios {
		s.Flow = steps(s.Flow)
		q.Scenarios[i] = s
	}
	raw, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("encode the plan for the shards: %w", err)
	}
	for ph, name := range names {
		key, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		if bytes.Count(raw, []byte(`"`+ph+`"`)) != 1 {
			return nil, fmt.Errorf("encode the plan for the shards: header %q's placeholder is not in the plan's JSON exactly once", name)
		}
		raw = bytes.Replace(raw, []byte(`"`+ph+`"`), key, 1)
	}
	return raw, nil
}
