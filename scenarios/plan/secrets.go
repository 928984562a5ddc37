package plan

import "fmt"

// SecretHeaders names the headers of p whose values look like credentials
// — those MarshalJSON masks (secretHeader) — as "headers.NAME" for the
// plan's and "scenarios.S.flow[i].http.headers.NAME" for an http step's,
// scenario by scenario, each map by name, so that a caller about to copy the scenario where others
// can read it (a Kubernetes ConfigMap) can refuse without quoting a value.
func (p *Plan) SecretHeaders() []string {
	var out []string
	out = appendSecretHeaders(out, "headers", p.Headers)
	for _, s := range p.Scenarios {
		out = secretStepHeaders(out, "scenarios."+s.Name+".flow", s.Flow)
	}
	return out
}

func secretStepHeaders(out []string, path string, steps []Step) []string {
	for i, st := range steps {
		at := fmt.Sprintf("%s[%d]", path, i)
		if st.HTTP != nil {
			out = appendSecretHeaders(out, at+".http.headers", st.HTTP.Headers)
		}
		for j, c := range st.Choices {
			out = secretStepHeaders(out, fmt.Sprintf("%s.choose[%d].steps", at, j), c.Steps)
		}
	}
	return out
}

func appendSecretHeaders(out []string, path string, h map[string]string) []string {
	for _, k := range sortedKeys(h) {
		if secretHeader(k) {
			out = append(out, path+"."+k)
		}
	}
	return out
}
