package workers

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// ErrBadInput marks what the user must change: a worker count or source
// address that cannot be, or a plan that does not fit this machine
// (leakbench exits 2 with it).
var ErrBadInput = errors.New("bad input")

// fileReserve is how many open files a worker keeps for itself besides
// its users' connections: its standard streams, run directory files, the
// netpoller, a metrics listener, the Go runtime's own.
const fileReserve = 64

// Limits are what one worker process may open on this machine.
type Limits struct {
	// OpenFiles is the open-file limit of one process (RLIMIT_NOFILE, as
	// a Go process raises it to its hard limit at start).
	OpenFiles uint64
	// PortLow and PortHigh are ip_local_port_range: one source address
	// reaches one target address and port at most High−Low+1 times.
	PortLow, PortHigh int
}

// Ports is how many connections one source address may have open to one
// target address and port.
func (l Limits) Ports() int { return l.PortHigh - l.PortLow + 1 }

// conns is how many connections one worker may hold, its own files kept.
func (l Limits) conns() int {
	if l.OpenFiles <= fileReserve {
		return 0
	}
	return int(min(l.OpenFiles-fileReserve, 1<<30))
}

// portRangeFile is where Linux says which local ports a connect may use.
const portRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// ReadLimits reads this machine's limits: the open-file limit of this
// process (a worker, a Go process as this one, gets the same) and the
// local port range (Linux's default where the file is not there).
func ReadLimits() (Limits, error) {
	l := Limits{PortLow: 32768, PortHigh: 60999}
	n, err := openFileLimit()
	if err != nil {
		return l, fmt.Errorf("read the open-file limit: %w", err)
	}
	l.OpenFiles = n
	raw, err := os.ReadFile(portRangeFile)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("read the local port range: %w", err)
	}
	f := strings.Fields(string(raw))
	if len(f) != 2 {
		return l, fmt.Errorf("read the local port range: %s holds %q", portRangeFile, raw)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil || hi < lo {
		return l, fmt.Errorf("read the local port range: %s holds %q", portRangeFile, raw)
	}
	l.PortLow, l.PortHigh = lo, hi
	return l, nil
}

// Need is what one worker's slice of a plan opens at most.
type Need struct {
	Segment plan.Segment
	// Users is the most users of the slice at once (every scenario's peak
	// added up: scenarios that do not overlap are counted together, an
	// upper bound); Conns their connections, two for a listen user (its
	// requests and its notification stream).
	Users, Conns int
}

// Needs splits cp over n workers as the shards split it (plan.Segment)
// and says what each worker opens.
func Needs(cp *plan.Compiled, n int) []Need {
	out := make([]Need, n)
	for i := range n {
		seg := plan.Segment{Index: i, Count: n}
		part, _ := seg.Apply(cp)
		nd := Need{Segment: seg}
		for _, cs := range part.Scenarios {
			per := 1
			if cs.Listen {
				per = 2
			}
			nd.Users += cs.Users
			nd.Conns += cs.Users * per
		}
		out[i] = nd
	}
	return out
}

// totalUsers is the plan's users, all scenarios added up.
func totalUsers(cp *plan.Compiled) int {
	n := 0
	for _, cs := range cp.Scenarios {
		n += cs.Users
	}
	return n
}

// AutoCount is --workers auto: one worker per core, more when one
// worker's users would need more open files than it may hold; never more
// workers than users.
func AutoCount(cp *plan.Compiled, l Limits) int {
	users := totalUsers(cp)
	n := min(runtime.NumCPU(), max(users, 1))
	for n < users && !fitsFiles(Needs(cp, n), l) {
		n++
	}
	return n
}

func fitsFiles(needs []Need, l Limits) bool {
	for _, nd := range needs {
		if nd.Conns > l.conns() {
			return false
		}
	}
	return true
}

// CheckCount refuses a worker count that cannot be: below one, or more
// workers than the plan has users (a worker with no user plays nothing).
func CheckCount(cp *plan.Compiled, n int) error {
	users := totalUsers(cp)
	switch {
	case n < 1:
		return fmt.Errorf("%w: --workers %d: want 1 or more, or auto (one per core)", ErrBadInput, n)
	case n > users:
		return fmt.Errorf("%w: --workers %d: the plan has %d user(s) at most; more workers than users would play nothing", ErrBadInput, n, users)
	}
	return nil
}

// ParseSourceAddrs reads --source-addrs: IP addresses, comma-separated,
// each of this machine (any of 127.0.0.0/8, or an address of one of its
// interfaces), since a connection can only be dialed from a local one.
func ParseSourceAddrs(s string) ([]netip.Addr, error) {
	var local []netip.Addr
	if ifs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				local = append(local, p.Addr().Unmap())
			}
		}
	}
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%w: --source-addrs: %q is not an IP address", ErrBadInput, f)
		}
		a = a.Unmap()
		if !isLocal(a, local) {
			return nil, fmt.Errorf("%w: --source-addrs: %s is not an address of this machine (want 127.0.0.0/8 or one of its interfaces' addresses: ip addr; an alias is added with ip addr add)", ErrBadInput, a)
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --source-addrs: no address given", ErrBadInput)
	}
	return out, nil
}

// isLocal: a is one of local, or loopback (Linux answers for all of
// 127.0.0.0/8 on lo).
func isLocal(a netip.Addr, local []netip.Addr) bool {
	if a.Is4() && a.IsLoopback() {
		return true
	}
	for _, l := range local {
		if l == a {
			return true
		}
	}
	return false
}

// loopbackV4 reports whether target's host is an IPv4 loopback address
// or localhost, whose connections may come from any of 127.0.0.0/8.
func loopbackV4(target string) bool {
	u, err := url.Parse(target)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().Is4() && a.IsLoopback()
}

// Sources are the source addresses of the workers' connections, and how
// they were chosen.
type Sources struct {
	// All are the addresses; PerWorker[i] worker i's (nil: the kernel's
	// choice).
	All       []netip.Addr
	PerWorker [][]netip.Addr
	// From is "flag" (--source-addrs), "loopback" (chosen from
	// 127.0.0.0/8 for a loopback target) or "" (the kernel's choice).
	From string
}

// loopbackFill: a loopback source address gets at most 1/loopbackFill of
// its local ports' worth of connections (ChooseSources).
const loopbackFill = 4

// ChooseSources spreads the workers' connections over source addresses:
// given ones, each worker its own share when there are as many as
// workers (else all of them shared); for a loopback target without any,
// 127.0.0.1 upward, enough for a quarter of each one's local ports to
// carry the connections and at least one per worker; otherwise none (the kernel picks).
func ChooseSources(given []netip.Addr, target string, needs []Need, l Limits) Sources {
	n := len(needs)
	var s Sources
	switch {
	case len(given) > 0:
		s.All, s.From = given, "flag"
	case loopbackV4(target):
		want := n
		for _, nd := range needs {
			// Every worker gets as many as its busiest sibling needs,
			// each address filled to a quarter of its ports at most:
			// connect(2) looks for a free port of the address by
			// trying them in turn, and past about half of them taken
			// each try costs more (the moonshot's ramp, issue #43:
			// ~16,700 connections on one address each, the kernel
			// busy in connect and discovers timing out). Loopback has
			// addresses to spare.
			want = max(want, n*ceilDiv(nd.Conns, max(l.Ports()/loopbackFill, 1)))
		}
		// 127.0.0.1 upward: 127.0.0.0 is the network's own address.
		a := netip.AddrFrom4([4]byte{127, 0, 0, 1})
		for range min(want, 1<<24-2) {
			s.All = append(s.All, a)
			a = a.Next()
		}
		s.From = "loopback"
	default:
		s.PerWorker = make([][]netip.Addr, n)
		return s
	}
	s.PerWorker = make([][]netip.Addr, n)
	for i := range n {
		if len(s.All) < n {
			s.PerWorker[i] = s.All // too few to give each its own
			continue
		}
		for j := i; j < len(s.All); j += n {
			s.PerWorker[i] = append(s.PerWorker[i], s.All[j])
		}
	}
	return s
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// CheckBudget says, with the numbers, why the workers' connections do not
// fit this machine, if they do not: each worker's against the open-file
// limit, and the connections from each source address against the local
// ports it has to one target address and port.
func CheckBudget(needs []Need, src Sources, l Limits) error {
	n := len(needs)
	var problems []string
	total := 0
	for _, nd := range needs {
		total += nd.Conns
		if nd.Conns > l.conns() {
			problems = append(problems, fmt.Sprintf("%s needs up to %d connections (%d users, a listen user has two) but one process may open %d files (RLIMIT_NOFILE; %d kept for its own files): give more workers (--workers %d or more) or raise the limit (ulimit -n)",
				who(nd), nd.Conns, nd.Users, l.OpenFiles, fileReserve, minWorkers(needs, l)))
			break // one worker's figures say it; the others are alike
		}
	}
	ports := l.Ports()
	shared := len(src.All) > 0 && len(src.All) < n
	switch {
	case len(src.All) == 0 && total > ports:
		problems = append(problems, fmt.Sprintf("%d connections from one source address to one target address and port, but it has %d local ports (ip_local_port_range %d–%d): give --source-addrs with %d or more local addresses",
			total, ports, l.PortLow, l.PortHigh, ceilDiv(total, ports)))
	case shared && total > ports*len(src.All):
		problems = append(problems, fmt.Sprintf("%d connections from %d source addresses, %d local ports each (ip_local_port_range %d–%d): give --source-addrs with %d or more local addresses",
			total, len(src.All), ports, l.PortLow, l.PortHigh, ceilDiv(total, ports)))
	case len(src.All) > 0 && !shared:
		for i, nd := range needs {
			if have := len(src.PerWorker[i]) * ports; nd.Conns > have {
				problems = append(problems, fmt.Sprintf("%s needs up to %d connections from its %d source address(es), %d local ports each (ip_local_port_range %d–%d): give --source-addrs with %d or more local addresses",
					who(nd), nd.Conns, len(src.PerWorker[i]), ports, l.PortLow, l.PortHigh, n*ceilDiv(nd.Conns, ports)))
				break
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the plan does not fit this machine with %d worker(s): %s", ErrBadInput, n, strings.Join(problems, "; "))
}

// who names the process a need is of: a worker, or the one process that
// plays a whole plan.
func who(nd Need) string {
	if nd.Segment.Whole() {
		return "the load"
	}
	return "worker " + nd.Segment.String()
}

// minWorkers is the fewest workers whose shares of the users' connections
// each fit one process's open files, as the current split suggests.
func minWorkers(needs []Need, l Limits) int {
	total := 0
	for _, nd := range needs {
		total += nd.Conns
	}
	return max(len(needs)+1, ceilDiv(total, max(l.conns(), 1)))
}
