package plan

import (
	"time"

	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
	"github.com/leakbench/leakbench/scenarios/userdata"
)

// Compiled is a checked plan in the form the engine plays: every option
// resolved, every template and threshold parsed. It is made by [Compile]
// and only read after that.
type Compiled struct {
	Plan       *Plan
	Scenarios  []*CompiledScenario // in plan order
	Thresholds []*CompiledThreshold
}

// CompiledThreshold is a checked threshold, ready to evaluate: its metric's
// name, its tag filter and its expression, parsed.
type CompiledThreshold struct {
	Threshold
	Name   string // the metric, without its filter
	Filter []threshold.Tag
	Expr   threshold.Expr
}

// CompiledScenario is a checked scenario with its flow compiled.
type CompiledScenario struct {
	*Scenario
	// Index is the scenario's position in the plan.
	Index int
	Flow  []CompiledStep
	// RequestTimeout is the scenario's per-request timeout, else the
	// plan's.
	RequestTimeout time.Duration
	// Pin is the protocol setting its users' sessions take
	// (mcp.Session.Pin): "" (negotiate: the 2025 handshake),
	// AutoVersion, mcp.Version20260728 or a 2025 version pinned.
	Pin string
	// StartsWithInit: the flow begins with initialize, so users do not
	// initialize before their first iteration.
	StartsWithInit bool
	// Users is the most users the scenario runs at once.
	Users int
	// Length is how long its executor runs, from StartTime.
	Length time.Duration
	// Vars names the user variables its steps capture, by slot
	// (plan.Vars.Captured); Checks names its checks, by CompiledCheck.ID.
	Vars, Checks []string
	// Data is the scenario's data file (its own, else the plan's; nil:
	// none), DataTable its rows.
	Data      *DataSource
	DataTable *userdata.Table

	bind *binder // while its flow is compiled
}

// CompiledStep is a checked step. Kind is the Step's; the other fields
// belong to some kinds only, as in [Step].
type CompiledStep struct {
	Kind string
	// Name of the tool or prompt, URI of the resource.
	Name, URI Text
	// Args are the arguments of tools/call or prompts/get (nil: none).
	Args *Template
	// Timeout (0: the scenario's) and AbortAfter (0: never) of a request.
	Timeout, AbortAfter time.Duration
	Think               Think
	Probability         float64
	// Choices of a choose step; CumWeights[i] is the sum of the weights
	// of choices 0..i.
	Choices    [][]CompiledStep
	CumWeights []int
	// HTTP is an http step's request.
	HTTP *CompiledHTTP
	// Captures and Checks judge a request's answer; Uses lists the
	// variable slots its templates use (each must be set before it is
	// sent).
	Captures []CompiledCapture
	Checks   []*CompiledCheck
	Uses     []int
	// RoundTrips is what the step adds to its request in the 2026-07-28
	// era — answers to input_required, a task (nil: nothing).
	RoundTrips *mcp.RequestOptions
}

// Validate reports every problem with p, each naming where it is (file and
// line when p came from a file).
func (p *Plan) Validate() error {
	_, err := Compile(p)
	return err
}
