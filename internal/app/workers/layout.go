package workers

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// Config is what the user asked for: --workers N|auto and --source-addrs.
type Config struct {
	// Auto: one worker per core, more when the users need more open
	// files than one process may hold. Else Count workers (0: none, the
	// load is played in process).
	Auto  bool
	Count int
	// SourceAddrs are --source-addrs (ParseSourceAddrs), nil when not
	// given.
	SourceAddrs []netip.Addr
	// UpToUsers: a plan with fewer users than Count gets one worker per
	// user instead of a refusal (capacity's first, small stages).
	UpToUsers bool
}

// On reports whether the load is to be played by worker processes.
func (c Config) On() bool { return c.Auto || c.Count > 0 }

// ParseCount reads --workers: "" (none), "auto", or a number from 1.
func ParseCount(s string) (Config, error) {
	switch s = strings.TrimSpace(s); s {
	case "":
		return Config{}, nil
	case "auto":
		return Config{Auto: true}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return Config{}, fmt.Errorf("%w: --workers %q: want a number of worker processes (1 or more) or auto (one per core)", ErrBadInput, s)
	}
	if n < 1 {
		return Config{}, fmt.Errorf("%w: --workers %d: want 1 or more worker processes, or auto (one per core)", ErrBadInput, n)
	}
	return Config{Count: n}, nil
}

// Layout is how a plan's load is spread over worker processes: how many,
// each one's share, the source addresses of their connections, and the
// machine's limits it was checked against.
type Layout struct {
	Count   int
	Needs   []Need
	Sources Sources
	Limits  Limits
}

// NewLayout lays p out over workers as c asks, against target, and checks
// that it fits l: an error matching ErrBadInput, with the numbers, when
// the count cannot be or the connections do not fit.
func NewLayout(p *plan.Plan, c Config, target string, l Limits) (*Layout, error) {
	cp, err := plan.Compile(p)
	if err != nil {
		return nil, err
	}
	n := c.Count
	if c.Auto {
		n = AutoCount(cp, l)
	}
	if !c.On() {
		n = 1 // the process itself: its connections are checked alike
	}
	if c.UpToUsers {
		n = min(n, max(totalUsers(cp), 1))
	}
	if err := CheckCount(cp, n); err != nil {
		return nil, err
	}
	if err := checkReach(c.SourceAddrs, target); err != nil {
		return nil, err
	}
	needs := Needs(cp, n)
	src := ChooseSources(c.SourceAddrs, target, needs, l)
	if !c.On() && src.From == "loopback" {
		// One process as ever: the kernel's source address, unless the
		// connections need more (checked below).
		if needs[0].Conns <= l.Ports() {
			src = Sources{PerWorker: [][]netip.Addr{nil}}
		}
	}
	if err := CheckBudget(needs, src, l); err != nil {
		return nil, err
	}
	return &Layout{Count: n, Needs: needs, Sources: src, Limits: l}, nil
}

// checkReach refuses loopback source addresses for a target that is an
// address of another machine: no packet from 127.0.0.0/8 leaves this one.
func checkReach(given []netip.Addr, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return nil
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil || a.IsLoopback() {
		return nil // a name, or loopback: any local address may do
	}
	for _, g := range given {
		if g.IsLoopback() {
			return fmt.Errorf("%w: --source-addrs: %s is a loopback address, from which %s cannot be reached; give addresses of the interface that routes to it", ErrBadInput, g, a)
		}
	}
	return nil
}
