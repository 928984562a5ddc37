package starter

import (
	"crypto/tls"
	"errors"
	"net/http"
	"time"

	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// Errors callers branch on.
var (
	// ErrOptions: the options are wrong (no target, a target that is not
	// an http(s) URL): a usage error.
	ErrOptions = errors.New("bad init options")
	// ErrNotMCP: the target answered, but not as an MCP server (no
	// server/discover, no initialize): the message says what it got.
	ErrNotMCP = errors.New("the target is not an MCP server")
	// ErrExists: WriteFile would replace a file and force is off (a usage
	// error: give --force).
	ErrExists = errors.New("file exists")
)

// Bounds on what a server may make Init read.
const (
	DefaultMaxTools = 200      // tools written into the file
	MaxAnswerBytes  = 16 << 20 // one HTTP answer
	MaxSchemaDepth  = 8        // nesting of an inputSchema followed
	maxListed       = 10_000   // tools listed at all (more: the listing stops)
)

// Options say where the service is and how far Init may go.
type Options struct {
	// Target is the MCP endpoint (http or https).
	Target string
	// Token is a bearer token sent with every request ("" none); never
	// written into the file.
	Token string
	// Tokens, if set, gives the bearer token of every request (OAuth
	// client credentials: bearer.NewOAuthTokens) instead of Token.
	Tokens bearer.TokenSource
	// Headers are sent with every request and written into the file's
	// headers: (values of secret-looking names as ${NAME} references, not
	// their values).
	Headers map[string]string
	// TLS configures an https target (nil: the system's roots).
	TLS *tls.Config
	// HTTPClient, if set, is used as is (Token, TLS ignored): tests.
	HTTPClient *http.Client
	// Timeout bounds each request (default 10s); ctx bounds the whole.
	Timeout time.Duration
	// MaxTools caps the tools written (default DefaultMaxTools).
	MaxTools int
	// TryCalls sends each synthesised tools/call, prompts/get and
	// resources/read once and comments out those that fail, quoting the
	// answer. It calls the service's tools: writes happen.
	TryCalls bool
	// ProbeDSN, if set, is the PostgreSQL the probes will watch: Init
	// checks it (see Database) and writes what it found as comments.
	ProbeDSN string
	// RunLine is the command the file's header suggests to play it (the
	// caller knows the name it writes the file as, and the flags it was
	// given); empty: one naming leakbench.yaml.
	RunLine string
}

// Result is what Init found and wrote.
type Result struct {
	// YAML is the starter scenario file.
	YAML []byte
	// Service is what the server said about itself.
	Service *Service
	// Database is what the probe DSN showed (nil without one, or when
	// it could not be reached: DatabaseErr says why).
	Database    *Database
	DatabaseErr string
	// Notes are one-line findings to print (tools left out, TODOs,
	// branches commented out, a missing pg_monitor grant, ...).
	Notes []string
}

// Service is what an MCP server said about itself.
type Service struct {
	ServerName, ServerVersion string
	// ProtocolVersion is the version the client and server agreed on.
	ProtocolVersion string
	Tools           []Tool
	// ToolsListed counts the tools listed; ToolsCut says the listing
	// stopped at its bound (or at a cursor that repeated) before the end.
	ToolsListed int
	ToolsCut    bool
	// HasResources, HasPrompts: the server declared the capability.
	HasResources, HasPrompts bool
	Resources                []Resource
	Prompts                  []Prompt
}

// Tool is a tool and the call Init synthesised for it.
type Tool struct {
	Name, Description string
	// Arguments are the synthesised required arguments, in the schema's
	// order of required; Optional names the others, left out.
	Arguments []Argument
	Optional  []string
	// TODO, when not "", says why the whole call is a guess (an
	// inputSchema that is not an object schema).
	TODO string
	// Failed is the answer of a tried call that failed ("" none, or not
	// tried); Took how long a tried call took.
	Failed string
	Took   time.Duration
}

// Guessed reports whether any of the call is a guess (a TODO).
func (t Tool) Guessed() bool {
	if t.TODO != "" {
		return true
	}
	for _, a := range t.Arguments {
		if a.TODO != "" {
			return true
		}
	}
	return false
}

// Resource is a resource the server listed.
type Resource struct{ URI, Name, Failed string }

// Prompt is a prompt and its arguments.
type Prompt struct {
	Name, Description string
	Arguments         []PromptArgument
	Failed            string
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name     string
	Required bool
}

// Database is what the probe DSN showed.
type Database struct {
	// Role is the role the DSN logs in as; PgMonitor whether it has
	// pg_monitor (without it other sessions' queries show as
	// <insufficient privilege>).
	Role      string
	PgMonitor bool
	// IdleInTxTimeout is idle_in_transaction_session_timeout as the server
	// reports it ("0" off).
	IdleInTxTimeout string
	MaxConnections  int
	// Applications are the application_name values of the other sessions
	// connected, with how many each.
	Applications []Application
	// ApplicationsCut: there were more names than listed.
	ApplicationsCut bool
}

// Application is one application_name seen in pg_stat_activity.
type Application struct {
	Name     string
	Sessions int
}
