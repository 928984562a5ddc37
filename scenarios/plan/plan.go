package plan

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leakbench/leakbench/scenarios/mcp"
)

// Executors, as k6 names them.
const (
	ExecConstantVUs         = "constant-vus"
	ExecRampingVUs          = "ramping-vus"
	ExecPerVUIterations     = "per-vu-iterations"
	ExecConstantArrivalRate = "constant-arrival-rate"
	ExecRampingArrivalRate  = "ramping-arrival-rate"
	// ExecExternallyControlled starts VUs users and changes their number
	// while it runs, up to MaxVUs, when told to (a dashboard's control,
	// leakbench scale): k6's externally-controlled.
	ExecExternallyControlled = "externally-controlled"
)

// The MCP methods a virtual user can send, as step kinds and as their
// names in results and in metric tags ("method").
const (
	OpInitialize    = "initialize"
	OpPing          = "ping"
	OpListTools     = "tools/list"
	OpCallTool      = "tools/call"
	OpListResources = "resources/list"
	OpReadResource  = "resources/read"
	OpListPrompts   = "prompts/list"
	OpGetPrompt     = "prompts/get"
	// OpDiscover is MCP 2026-07-28's server/discover: a step of its own
	// in either era, and what a user of that era sends where a 2025 user
	// initializes (a start with no session to open).
	OpDiscover = "server/discover"
	// OpDelete is the HTTP DELETE of an endSession step (or of an
	// initialize step replacing a live session); no step has this kind.
	OpDelete = "DELETE"
)

// The requests a step sends beyond its own in the 2026-07-28 era: a
// task's polls, updates and cancellation (a tools/call step with task:),
// and a listening user's notification stream (a scenario with listen:
// true; in the 2025 era its GET stream). No step has these kinds; they
// are method tags of their own.
const (
	OpTasksGet    = mcp.MethodTasksGet
	OpTasksUpdate = mcp.MethodTasksUpdate
	OpTasksCancel = mcp.MethodTasksCancel
	OpListen      = mcp.MethodListen
)

// Methods lists the request methods, as a threshold's method tag names
// them.
var Methods = []string{OpInitialize, OpPing, OpListTools, OpCallTool, OpListResources,
	OpReadResource, OpListPrompts, OpGetPrompt, OpDiscover, OpDelete,
	OpTasksGet, OpTasksUpdate, OpTasksCancel, OpListen}

// StepMethods are the Methods a step may be.
var StepMethods = Methods[:10]

// Cache settings (a scenario's cache:): how users treat the ttlMs of
// 2026-07-28 list and resources/read results.
const (
	// CacheHonor, the default (also ""), serves a result from the
	// user's cache while it is fresh, as real clients do: the step sends
	// nothing and counts as a cache hit.
	CacheHonor = "honor"
	// CacheIgnore sends every request, whatever its ttlMs.
	CacheIgnore = "ignore"
)

// Step kinds besides the MCP methods.
const (
	StepThink      = "think"
	StepEndSession = "endSession"
	StepChoose     = "choose"
)

// Think-time distributions.
const (
	ThinkFixed       = "fixed"
	ThinkUniform     = "uniform"
	ThinkExponential = "exponential"
)

// Protocol settings (protocolVersion) besides a pinned version.
const (
	// AutoVersion, the scenario file's default, speaks what the server
	// offers, as the SDK clients do: server/discover, then 2026-07-28
	// when the server offers it, else the 2025 handshake
	// ([mcp.VersionAuto]).
	AutoVersion = mcp.VersionAuto
	// NegotiateVersion is the 2025 handshake only: it asks for
	// [mcp.ProtocolVersion] and accepts whatever 2025 version the server
	// chooses (the default before 2026-07-28).
	NegotiateVersion = "negotiate"
)

// Limits that keep every plan bounded. MaxUsers is a plan's users
// together: more than one process can hold (about 19,900 connections
// here), since a plan may be played as shards or as worker processes
// (run --workers); what one machine can open is the workers' budget
// check's to say, with its numbers.
const (
	MaxUsers          = 1_000_000
	MaxDuration       = 24 * time.Hour
	MaxRequestTimeout = 10 * time.Minute
	maxWeight         = 1_000_000
)

// Plan is a whole scenario file: what to load, how, and the thresholds
// that judge the run. It holds resolved values: the scenario-file decoder
// (package scenariofile) fills in k6's defaults (gracefulStop 30s, ...),
// while a Plan built in Go takes its zero values literally. It serializes
// to JSON in the scenario file's own shape (JSON being YAML, the output
// parses back), without tokens and with secret-looking header values
// redacted, so it can be written into a run directory as-is.
type Plan struct {
	// Target is the MCP endpoint URL; RunOptions.Target overrides it.
	Target string
	// Timeout is the default per-request timeout (the client gives up and
	// counts a failure of kind "timeout").
	Timeout Duration
	// ProtocolVersion is AutoVersion, NegotiateVersion, or a version
	// pinned: mcp.Version20260728 or one of mcp.SupportedVersions. The
	// scenario-file decoder fills in AutoVersion when the file has none;
	// "" in a Plan built in Go negotiates, as the mcp client's "" does.
	ProtocolVersion string
	// Headers are sent with every request.
	Headers map[string]string
	// TokensFile names the file the tokens were read from (one a line),
	// relative to the scenario file. User i uses Tokens[i % len(Tokens)].
	TokensFile string
	Tokens     []string
	// Seed seeds every random choice (think times, picks, probabilities).
	Seed int64
	// SharedConnections is the connections: option: 0 (perUser, the
	// default) gives every virtual user its own keep-alive connection;
	// N > 0 ({shared: N}) makes all users share a pool of at most N idle
	// connections (see connections.go).
	SharedConnections int
	// Scenarios run side by side, each from its own StartTime.
	Scenarios []Scenario
	// Thresholds are checked at the end of the run (and every second for
	// those with AbortOnFail).
	Thresholds []Threshold
	// Data is the per-user data file of scenarios without their own.
	Data *DataSource

	file       string   // the scenario file, for error messages
	tokensLine int      // where tokensFile was given
	dataLine   int      // where data was given
	notes      []string // the decoder's warnings (AddWarning)
}

// Scenario is one group of virtual users playing Flow under an executor.
// Which fields matter depends on Executor, as in k6.
type Scenario struct {
	Name     string
	Executor string
	// StartTime delays the scenario from the start of the run.
	StartTime Duration
	// GracefulStop is how long requests in flight at the scenario's end
	// (or at an interrupt) may take before they are abandoned.
	GracefulStop Duration

	VUs        int      // constant-vus, per-vu-iterations, externally-controlled (at the start)
	Duration   Duration // constant-vus, constant-arrival-rate, externally-controlled
	Iterations int64    // per-vu-iterations: per VU
	// MaxDuration bounds a per-vu-iterations scenario.
	MaxDuration Duration

	StartVUs         int     // ramping-vus
	Stages           []Stage // ramping-vus (target VUs), ramping-arrival-rate (target rate)
	GracefulRampDown Duration

	Rate      int      // constant-arrival-rate: iterations per TimeUnit
	StartRate int      // ramping-arrival-rate
	TimeUnit  Duration // arrival-rate executors
	// PreAllocatedVUs are created (and initialized) before the rate clock
	// starts; more are created up to MaxVUs when none is free. With all
	// MaxVUs busy, a due iteration is dropped and counted, never queued.
	PreAllocatedVUs, MaxVUs int

	// Timeout and ProtocolVersion override the plan's for this scenario
	// (zero: the plan's).
	Timeout         Duration
	ProtocolVersion string
	// Cache is CacheHonor ("" too) or CacheIgnore.
	Cache string
	// Listen makes every user keep a notification stream open beside its
	// requests: subscriptions/listen in the 2026-07-28 era, the session's
	// GET stream in the 2025 era (resumed with Last-Event-ID).
	Listen bool

	// Flow is one iteration of a virtual user.
	Flow []Step
	// Data is the scenario's per-user data file (nil: the plan's).
	Data *DataSource

	line  int
	lines map[string]int // line of each option given in the file
}

// at is the line of option key in the scenario file, or the scenario's.
func (s *Scenario) at(key string) int {
	if l, ok := s.lines[key]; ok {
		return l
	}
	return s.line
}

// Where a plan's parts stand in its scenario file, for the problems
// Compile reports: the scenario-file decoder records them; a plan built
// in Go has none.

// SetSource records the file p was read from and the lines of its
// tokensFile and data options.
func (p *Plan) SetSource(file string, tokensLine, dataLine int) {
	p.file, p.tokensLine, p.dataLine = file, tokensLine, dataLine
}

// SetLine records the line of the scenario's name.
func (s *Scenario) SetLine(line int) { s.line = line }

// SetOptionLine records the line of the scenario's option key.
func (s *Scenario) SetOptionLine(key string, line int) {
	if s.lines == nil {
		s.lines = map[string]int{}
	}
	s.lines[key] = line
}

// SetLine records the stage's line.
func (st *Stage) SetLine(line int) { st.line = line }

// SetLine records the step's line.
func (st *Step) SetLine(line int) { st.line = line }

// SetLine records the choice's line.
func (c *Choice) SetLine(line int) { c.line = line }

// SetLine records the threshold's line.
func (t *Threshold) SetLine(line int) { t.line = line }

// SetLine records the data source's line.
func (d *DataSource) SetLine(line int) { d.line = line }

// Stage is one linear segment of a ramping executor: from the previous
// target to Target over Duration.
type Stage struct {
	Duration Duration `json:"duration"`
	Target   int      `json:"target"`
	line     int
}

// Step is one step of a user's flow. Kind is an MCP method (OpPing,
// OpCallTool, ...), StepThink, StepEndSession or StepChoose; the other
// fields belong to some kinds only. Name, URI and the string values of
// Arguments are templates (see the package documentation).
type Step struct {
	Kind string
	// Name of the tool (tools/call) or prompt (prompts/get).
	Name string
	// URI of the resource (resources/read).
	URI string
	// Arguments of tools/call or prompts/get.
	Arguments map[string]any
	// Timeout overrides the scenario's per-request timeout (0: keep it).
	Timeout Duration
	// AbortAfter makes the client give up on the request after this delay
	// and close its connection; counted as "aborted", not as a failure.
	AbortAfter Duration
	// Think is the pause of a think step.
	Think Think
	// Probability of an endSession step ending the session (0..1].
	Probability float64
	// Choices of a choose step, one picked per pass by weight.
	Choices []Choice
	// HTTP is the request of an http step (StepHTTP).
	HTTP *HTTPRequest
	// Captures and Checks of a request step (MCP or http), judged on its
	// answer: the JSON-RPC result, or an http step's JSON body.
	Captures []Capture
	Checks   []Check
	// Inputs answer the server's input requests (2026-07-28's
	// input_required) on tools/call, prompts/get and resources/read: by
	// the server's key in inputRequests, else by the request's method
	// (elicitation/create, sampling/createMessage, roots/list); each
	// value is the result the user gives (an object).
	Inputs map[string]any
	// Task runs a tools/call as a task when the server offers one
	// (2026-07-28's Tasks extension); nil: no task.
	Task *TaskStep

	line int
}

// TaskStep is a tools/call step's task: option.
type TaskStep struct {
	// CancelAfter sends tasks/cancel this long after the task was
	// created (0: never); the step then counts as aborted.
	CancelAfter Duration `json:"cancelAfter"`
	// Timeout bounds the task, its polls included (0: 10 minutes).
	Timeout Duration `json:"timeout"`
}

// Think is a think-time distribution: Fixed (Duration), Uniform (Min..Max)
// or Exponential (mean Duration, capped at ten times the mean).
type Think struct {
	Distribution string   `json:"-"`
	Duration     Duration `json:"-"`
	Min, Max     Duration `json:"-"`
}

// Choice is one alternative of a choose step.
type Choice struct {
	Weight int    `json:"weight"`
	Steps  []Step `json:"steps"`
	line   int
}

// Threshold is one pass/fail criterion, in k6's syntax.
type Threshold struct {
	// Metric is a metric name with an optional tag filter, e.g.
	// "mcp_req_duration{method:tools/call}".
	Metric string
	// Expression is e.g. "p(95)<500" or "rate<0.01".
	Expression string
	// AbortOnFail stops the run as soon as the threshold fails, checked
	// every second once DelayAbortEval has passed since the start.
	AbortOnFail    bool
	DelayAbortEval Duration

	line int
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("1m30s"); it reads such strings or numbers of nanoseconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("bad duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var ns int64
	if err := json.Unmarshal(b, &ns); err != nil {
		return fmt.Errorf("duration must be a string like \"30s\" or nanoseconds: %w", err)
	}
	*d = Duration(ns)
	return nil
}

// ExecutorOptions lists, per executor, its own options in a scenario file
// (and in the plan's JSON), in order.
var ExecutorOptions = map[string][]string{
	ExecConstantVUs:          {"vus", "duration"},
	ExecRampingVUs:           {"startVUs", "stages", "gracefulRampDown"},
	ExecPerVUIterations:      {"vus", "iterations", "maxDuration"},
	ExecConstantArrivalRate:  {"rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"},
	ExecRampingArrivalRate:   {"startRate", "timeUnit", "stages", "preAllocatedVUs", "maxVUs"},
	ExecExternallyControlled: {"vus", "maxVUs", "duration"},
}

// Option returns a pointer to the field behind a scenario option, as a
// scenario file names it (nil for executor and unknown names): the one
// mapping the scenario-file decoder and MarshalJSON share.
func (s *Scenario) Option(key string) any {
	switch key {
	case "startTime":
		return &s.StartTime
	case "gracefulStop":
		return &s.GracefulStop
	case "timeout":
		return &s.Timeout
	case "protocolVersion":
		return &s.ProtocolVersion
	case "cache":
		return &s.Cache
	case "listen":
		return &s.Listen
	case "flow":
		return &s.Flow
	case "data":
		return &s.Data
	case "vus":
		return &s.VUs
	case "duration":
		return &s.Duration
	case "iterations":
		return &s.Iterations
	case "maxDuration":
		return &s.MaxDuration
	case "startVUs":
		return &s.StartVUs
	case "stages":
		return &s.Stages
	case "gracefulRampDown":
		return &s.GracefulRampDown
	case "rate":
		return &s.Rate
	case "startRate":
		return &s.StartRate
	case "timeUnit":
		return &s.TimeUnit
	case "preAllocatedVUs":
		return &s.PreAllocatedVUs
	case "maxVUs":
		return &s.MaxVUs
	}
	return nil
}
