package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Limits that keep every run bounded.
const (
	MaxUsers          = 50000
	MaxDuration       = 24 * time.Hour
	MaxRequestTimeout = 10 * time.Minute
	maxWeight         = 1_000_000
)

// DefaultListToolsEvery is the default for Config.ListToolsEvery.
const DefaultListToolsEvery = 3

// ToolCall is one tool a virtual user may call, with its arguments and its
// relative weight among Config.Tools (default 1).
type ToolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Weight    int            `json:"weight,omitempty"`
}

// Config is what a run does. It serializes to JSON as-is, so it can be
// written into a run directory and read back; durations are written as Go
// duration strings ("1m30s") and read from strings or from nanoseconds.
// Tokens are never serialized.
type Config struct {
	Target         string        `json:"target"`           // MCP endpoint URL, e.g. http://127.0.0.1:PORT/mcp
	Users          int           `json:"users"`            // virtual users
	Duration       time.Duration `json:"duration"`         // how long users keep iterating
	RampUp         time.Duration `json:"ramp_up"`          // users start spread evenly over this
	ThinkMin       time.Duration `json:"think_min"`        // think time between requests is uniform in
	ThinkMax       time.Duration `json:"think_max"`        // [ThinkMin, ThinkMax]
	RequestTimeout time.Duration `json:"request_timeout"`  // client gives up after this (default 10s)
	ListToolsEvery int           `json:"list_tools_every"` // a tools/list every N iterations (default 3; < 0: never)
	Tools          []ToolCall    `json:"tools"`            // picked by weight each iteration; none: ping instead
	Tokens         []string      `json:"-"`                // user i uses Tokens[i%len]; never serialized (secrets)
	Seed           int64         `json:"seed"`             // seeds think times and tool picks
}

// withDefaults returns c with zero values replaced by defaults.
func (c Config) withDefaults() Config {
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.ListToolsEvery == 0 {
		c.ListToolsEvery = DefaultListToolsEvery
	}
	return c
}

// Validate reports every problem with c, one per line.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if err := checkTarget(c.Target); err != nil {
		errs = append(errs, err)
	}
	switch {
	case c.Users <= 0:
		bad("users must be > 0 (got %d)", c.Users)
	case c.Users > MaxUsers:
		bad("users must be <= %d (got %d)", MaxUsers, c.Users)
	}
	switch {
	case c.Duration <= 0:
		bad("duration must be > 0 (got %s)", c.Duration)
	case c.Duration > MaxDuration:
		bad("duration must be <= %s (got %s)", MaxDuration, c.Duration)
	}
	switch {
	case c.RampUp < 0:
		bad("ramp_up must be >= 0 (got %s)", c.RampUp)
	case c.Duration > 0 && c.RampUp >= c.Duration:
		bad("ramp_up (%s) must be shorter than duration (%s), or some users never start", c.RampUp, c.Duration)
	}
	if c.ThinkMin < 0 {
		bad("think_min must be >= 0 (got %s)", c.ThinkMin)
	}
	if c.ThinkMax < c.ThinkMin {
		bad("think_max (%s) must be >= think_min (%s)", c.ThinkMax, c.ThinkMin)
	}
	if c.RequestTimeout < 0 || c.RequestTimeout > MaxRequestTimeout {
		bad("request_timeout must be in [0, %s], 0 meaning %s (got %s)", MaxRequestTimeout, DefaultRequestTimeout, c.RequestTimeout)
	}
	for i, t := range c.Tools {
		if strings.TrimSpace(t.Name) == "" {
			bad("tools[%d]: name is empty", i)
		}
		if t.Weight < 0 || t.Weight > maxWeight {
			bad("tools[%d] (%s): weight must be in [0, %d], 0 meaning 1 (got %d)", i, t.Name, maxWeight, t.Weight)
		}
	}
	for i, tok := range c.Tokens {
		// Never print the token itself.
		if tok == "" {
			bad("tokens[%d] is empty", i)
		} else if badToken(tok) {
			bad("tokens[%d] contains whitespace or control characters", i)
		}
	}
	return errors.Join(errs...)
}

// checkTarget accepts only http(s) URLs of this machine: leakbench loads
// loopback addresses and the private networks of the stack's own containers,
// never someone else's service.
func checkTarget(target string) error {
	if target == "" {
		return errors.New("target is empty; want the MCP endpoint URL, e.g. http://127.0.0.1:8080/mcp")
	}
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("target is not a URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("target %q: scheme must be http or https", u.Redacted())
	}
	if u.User != nil {
		return fmt.Errorf("target %q must not contain credentials; pass bearer tokens as tokens", u.Redacted())
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("target %q has no host", u.Redacted())
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err == nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
		return nil
	}
	return fmt.Errorf("target host %q is not on this machine: use localhost, a loopback address or a private (container) address", host)
}

// configJSON is Config's wire form: durations as strings.
type configJSON struct {
	Target         string       `json:"target"`
	Users          int          `json:"users"`
	Duration       jsonDuration `json:"duration"`
	RampUp         jsonDuration `json:"ramp_up"`
	ThinkMin       jsonDuration `json:"think_min"`
	ThinkMax       jsonDuration `json:"think_max"`
	RequestTimeout jsonDuration `json:"request_timeout"`
	ListToolsEvery int          `json:"list_tools_every"`
	Tools          []ToolCall   `json:"tools"`
	Seed           int64        `json:"seed"`
}

// MarshalJSON writes c with durations as strings and without tokens.
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(configJSON{
		Target: c.Target, Users: c.Users,
		Duration: jsonDuration(c.Duration), RampUp: jsonDuration(c.RampUp),
		ThinkMin: jsonDuration(c.ThinkMin), ThinkMax: jsonDuration(c.ThinkMax),
		RequestTimeout: jsonDuration(c.RequestTimeout),
		ListToolsEvery: c.ListToolsEvery, Tools: c.Tools, Seed: c.Seed,
	})
}

// UnmarshalJSON reads what MarshalJSON writes; durations may also be
// numbers of nanoseconds. Tokens are left as they were.
func (c *Config) UnmarshalJSON(b []byte) error {
	var w configJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	tokens := c.Tokens
	*c = Config{
		Target: w.Target, Users: w.Users,
		Duration: time.Duration(w.Duration), RampUp: time.Duration(w.RampUp),
		ThinkMin: time.Duration(w.ThinkMin), ThinkMax: time.Duration(w.ThinkMax),
		RequestTimeout: time.Duration(w.RequestTimeout),
		ListToolsEvery: w.ListToolsEvery, Tools: w.Tools, Seed: w.Seed,
		Tokens: tokens,
	}
	return nil
}
