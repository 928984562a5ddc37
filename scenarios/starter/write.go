package starter

// The starter file as text: written by hand rather than by a YAML
// encoder, because its comments (where a value came from, why it is a
// guess, what the database showed) are the point. Every value is
// JSON-encoded, JSON being YAML, so that no name or value the server
// gave can change the file's structure.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// promptGuess is what a tried prompts/get sends for a required argument
// (the first of the file's $pick).
const promptGuess = "alpha"

// Defaults of the starter load: small, short, so that a first run is
// quick and gentle; the comments say what to raise.
const (
	starterVUs      = 5
	starterDuration = "30s"
)

// branchIndent is the column of a choose branch's "- weight".
const branchIndent = 10

// w is a line writer.
type w struct{ b bytes.Buffer }

func (w *w) line(indent int, format string, args ...any) {
	w.b.WriteString(strings.Repeat(" ", indent))
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

// comment writes a comment line, its text made one line.
func (w *w) comment(indent int, format string, args ...any) {
	w.line(indent, "# %s", oneLine(fmt.Sprintf(format, args...), 300))
}

// js is v as JSON (YAML), no HTML escaping.
func js(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// render writes the starter scenario.
func render(o Options, res *Result, now time.Time) []byte {
	svc := res.Service
	var out w
	header(&out, o, res, now)
	out.line(0, "target: %s", js(o.Target))
	out.comment(0, "The client gives up on a request after this long (a failure of kind timeout).")
	out.line(0, "timeout: %s", max(o.Timeout, 10*time.Second))
	out.comment(0, "auto: the era the server offers (it spoke %s to init).", svc.ProtocolVersion)
	out.line(0, "protocolVersion: auto")
	out.line(0, "seed: 1")
	headers(&out, o.Headers)
	out.line(0, "")
	probe(&out, res)
	out.line(0, "")
	out.comment(0, "One scenario: a few users for a short while. Raise vus and duration (or --vus, --duration)")
	out.comment(0, "once it plays clean; see docs/reference/scenario.md for ramps and arrival rates.")
	out.line(0, "scenarios:")
	out.line(2, "starter:")
	out.line(4, "executor: constant-vus")
	out.line(4, "vus: %d", starterVUs)
	out.line(4, "duration: %s", starterDuration)
	out.line(4, "gracefulStop: 5s")
	out.line(4, "flow:")
	out.comment(6, "A user pauses 0.2-1 s between requests, as a person or an agent does.")
	out.line(6, "- think: { uniform: [200ms, 1s] }")
	out.comment(6, "Then one branch, by weight: each tool once as often as a listing. Adjust to your traffic.")
	out.line(6, "- choose:")
	out.line(10, "- weight: 2")
	out.line(12, "steps: [tools/list]")
	for _, t := range svc.Tools {
		tool(&out, t)
	}
	if svc.ToolsCut || svc.ToolsListed > len(svc.Tools) {
		out.comment(10, "%d more tools listed were left out (at most %d written: a file of thousands of branches is read by nobody).", svc.ToolsListed-len(svc.Tools), len(svc.Tools))
		if svc.ToolsCut {
			out.comment(10, "The listing itself stopped at its bound (%d tools, or a cursor that repeated).", maxListed)
		}
	}
	if svc.HasResources {
		out.line(10, "- weight: 1")
		out.line(12, "steps: [resources/list]")
		for _, r := range svc.Resources {
			resource(&out, r)
		}
	}
	if svc.HasPrompts {
		out.line(10, "- weight: 1")
		out.line(12, "steps: [prompts/list]")
		for _, p := range svc.Prompts {
			prompt(&out, p)
		}
	}
	out.line(0, "")
	thresholds(&out, svc)
	return out.b.Bytes()
}

func header(out *w, o Options, res *Result, now time.Time) {
	svc := res.Service
	out.comment(0, "Starter scenario for %s, written by `leakbench init` on %s.", o.Target, now.UTC().Format("2006-01-02"))
	name := strings.TrimSpace(svc.ServerName + " " + svc.ServerVersion)
	if name == "" {
		name = "(no name)"
	}
	out.comment(0, "The server: %s, MCP %s; %d tools, %d resources, %d prompts listed.", name, svc.ProtocolVersion, svc.ToolsListed, len(svc.Resources), len(svc.Prompts))
	out.line(0, "#")
	out.line(0, "# Every argument below comes from the tool's inputSchema. A \"# TODO\" marks a value the")
	out.line(0, "# schema could not settle (free text, a pattern): it plays, but it is a guess — replace it.")
	if o.TryCalls {
		out.line(0, "# Each call was tried once; those that failed are commented out with the answer they got.")
	} else {
		out.line(0, "# The calls were not tried (leakbench init --try would): a guess may fail.")
	}
	if o.Token != "" || o.Tokens != nil {
		out.line(0, "# Listed as the bearer token init was given: a service that scopes tools per user may offer")
		out.line(0, "# other users other tools; give the run that token (or users with the same tools).")
	}
	out.line(0, "#")
	out.line(0, "# Run it against the service, with the probes watching its PostgreSQL:")
	run := o.RunLine
	if run == "" {
		run = fmt.Sprintf("leakbench run --target %s --scenario leakbench.yaml --probe-dsn-file FILE --out out/run", o.Target)
	}
	out.line(0, "#   %s", strings.ReplaceAll(run, "\n", " "))
	out.line(0, "# Every key: docs/reference/scenario.md.")
	database(out, res)
	out.line(0, "")
}

// database writes what the probe DSN showed.
func database(out *w, res *Result) {
	if res.DatabaseErr != "" {
		out.line(0, "#")
		out.comment(0, "The probe DSN could not be checked: %s", res.DatabaseErr)
		return
	}
	db := res.Database
	if db == nil {
		return
	}
	out.line(0, "#")
	out.line(0, "# What the probe DSN showed (leakbench init --probe-dsn):")
	if db.PgMonitor {
		out.comment(0, "  role %s has pg_monitor: the probes see every session's state and query.", db.Role)
	} else {
		out.comment(0, "  TODO: role %s lacks pg_monitor: other roles' sessions show no query, so a culprit cannot be named. Run: GRANT pg_monitor TO %s;", db.Role, db.Role)
	}
	switch d, ok := db.IdleInTx(); {
	case !ok:
		out.comment(0, "  idle_in_transaction_session_timeout = %s", db.IdleInTxTimeout)
	case d == 0:
		out.comment(0, "  idle_in_transaction_session_timeout is off (0): a leaked session stays idle in transaction until the service closes it; the probe's drain below bounds how long a run waits.")
	default:
		out.comment(0, "  idle_in_transaction_session_timeout = %s: PostgreSQL ends a session left idle in a transaction after %s.", db.IdleInTxTimeout, d)
	}
	out.comment(0, "  max_connections = %d.", db.MaxConnections)
	if len(db.Applications) == 0 {
		out.comment(0, "  No other session was connected: is the service running against this database?")
		return
	}
	var apps []string
	for _, a := range db.Applications {
		n := a.Name
		if n == "" {
			n = "(no application_name)"
		}
		apps = append(apps, fmt.Sprintf("%s ×%d", n, a.Sessions))
	}
	more := ""
	if db.ApplicationsCut {
		more = ", …"
	}
	out.comment(0, "  Sessions connected, by application_name: %s%s.", strings.Join(apps, ", "), more)
	out.line(0, "#   Naming the service's pool (application_name=… in its DSN) lets the report tell its sessions apart.")
}

func headers(out *w, h map[string]string) {
	if len(h) == 0 {
		return
	}
	secret := map[string]bool{}
	for _, p := range (&plan.Plan{Headers: h}).SecretHeaders() {
		secret[strings.TrimPrefix(p, "headers.")] = true
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	out.comment(0, "Headers init was given. Secret-looking ones are not written: ${NAME} takes them from -e NAME=… or the environment.")
	out.line(0, "headers:")
	for _, k := range names {
		if secret[k] {
			out.line(2, "%s: %s", js(k), js("${"+envName(k)+"}"))
			continue
		}
		out.line(2, "%s: %s", js(k), js(strings.ReplaceAll(h[k], "${", "$${")))
	}
}

// envName makes a header name a variable name (X-Api-Key: X_API_KEY).
func envName(h string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, h)
}

func probe(out *w, res *Result) {
	drain := 10 * time.Second
	note := "after the load, watch this long at most for sessions left idle in transaction (it ends early once none is)"
	if res.Database != nil {
		if d, ok := res.Database.IdleInTx(); ok && d > 0 && d+2*time.Second < 2*time.Minute {
			drain = d + 2*time.Second
			note = "the server's idle_in_transaction_session_timeout and 2 s: a leaked session is seen to its end"
		}
	}
	out.comment(0, "How the probes watch PostgreSQL beside the load (leakbench run --probe-dsn …); their verdict is the run's.")
	out.line(0, "probe:")
	out.line(2, "interval: 100ms   # pg_stat_activity sampled this often")
	out.line(2, "stuck_after: 1s   # a session idle in a transaction longer than this is stuck")
	out.line(2, "drain: %s   # %s", drain, note)
}

func tool(out *w, t Tool) {
	var b w
	if t.Description != "" {
		b.comment(10, "%s: %s", t.Name, t.Description)
	}
	if t.TODO != "" {
		b.comment(10, "TODO: %s", t.TODO)
	}
	b.line(10, "- weight: 1")
	b.line(12, "steps:")
	b.line(14, "- tools/call:")
	b.line(18, "name: %s", js(t.Name))
	if len(t.Optional) > 0 {
		b.comment(18, "optional, left out: %s", strings.Join(t.Optional, ", "))
	}
	if len(t.Arguments) == 0 {
		b.line(18, "arguments: {}")
	} else {
		b.line(18, "arguments:")
	}
	for _, a := range t.Arguments {
		c := ""
		switch {
		case a.TODO != "":
			c = "   # TODO: " + oneLine(a.TODO, 200)
		case a.Note != "":
			c = "   # " + oneLine(a.Note, 100)
		}
		b.line(20, "%s: %s%s", js(a.Name), js(a.Value), c)
	}
	emit(out, b, t.Failed, t.TODO != "")
}

func resource(out *w, r Resource) {
	var b w
	b.line(10, "- weight: 1")
	b.line(12, "steps:")
	b.line(14, "- resources/read: { uri: %s }", js(r.URI))
	emit(out, b, r.Failed, strings.Contains(r.URI, "{{"))
}

func prompt(out *w, p Prompt) {
	var b w
	if p.Description != "" {
		b.comment(10, "%s: %s", p.Name, p.Description)
	}
	b.line(10, "- weight: 1")
	b.line(12, "steps:")
	b.line(14, "- prompts/get:")
	b.line(18, "name: %s", js(p.Name))
	req := 0
	for _, a := range p.Arguments {
		if a.Required {
			req++
		}
	}
	if req == 0 {
		b.line(18, "arguments: {}")
	} else {
		b.line(18, "arguments:")
	}
	for _, a := range p.Arguments {
		if a.Required {
			b.line(20, "%s: %s   # TODO: free text: these are guesses; put values the service knows", js(a.Name), js(map[string]any{"$pick": []string{promptGuess, "bravo", "charlie"}}))
		}
	}
	emit(out, b, p.Failed, strings.Contains(p.Name, "{{"))
}

// emit writes a branch, commented out when it failed when tried (or
// cannot be written as a call), with why.
func emit(out *w, b w, failed string, off bool) {
	if failed == "" && !off {
		out.b.Write(b.b.Bytes())
		return
	}
	if failed != "" {
		out.comment(10, "Tried once, it failed: %s", failed)
		out.comment(10, "so this branch is off; fix its arguments and remove the # to play it.")
	}
	// "# " in one column, so that taking it out gives the branch back.
	for _, l := range strings.SplitAfter(b.b.String(), "\n") {
		if len(l) > branchIndent {
			out.b.WriteString(l[:branchIndent] + "# " + l[branchIndent:])
		}
	}
}

func thresholds(out *w, svc *Service) {
	out.comment(0, "Pass or fail, in k6's syntax (a failed threshold makes leakbench run exit 99). The leak")
	out.comment(0, "verdict itself comes from the probes (probe: above), not from these.")
	out.line(0, "thresholds:")
	out.line(2, "mcp_req_failed: [\"rate<0.01\"]   # at most 1%% of requests fail")
	limit, why := latencyLimit(svc)
	out.line(2, "mcp_req_duration: [\"p(95)<%d\"]   # 95%% answered within %s", limit.Milliseconds(), why)
	out.comment(2, "generator_lag: [\"p(99)<50\"] would also check that leakbench itself kept up with its schedule.")
}

// latencyLimit is the p(95) threshold: 1 s, or three times the slowest
// tried call rounded up to a second, when a tool is slower than that by
// its nature (a report); said in the comment.
func latencyLimit(svc *Service) (time.Duration, string) {
	var slowest time.Duration
	name := ""
	for _, t := range svc.Tools {
		if t.Failed == "" && t.Took > slowest {
			slowest, name = t.Took, t.Name
		}
	}
	if 3*slowest <= time.Second {
		return time.Second, "1 s"
	}
	limit := (3*slowest + time.Second - 1).Truncate(time.Second)
	return limit, fmt.Sprintf("%s: three times the slowest tried call (%s, %s)", limit, name, slowest.Round(time.Millisecond))
}
