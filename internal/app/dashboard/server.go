package dashboard

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

// DefaultAddr is where the dashboard listens without an address: k6's
// dashboard port, on loopback.
const DefaultAddr = "127.0.0.1:5665"

// Errors a caller branches on (the CLI turns both into a usage error).
var (
	// ErrNotLoopback: a non-loopback address without a token.
	ErrNotLoopback = errors.New("dashboard address is not loopback")
	// ErrAddrInUse: something already listens on the address.
	ErrAddrInUse = errors.New("dashboard address in use")
	// ErrBadToken: the token file is unreadable, empty or too short.
	ErrBadToken = errors.New("bad dashboard token")
)

// minTokenLen keeps a guessable token out: 16 characters is 96 bits as
// base64, beyond an online guess.
const minTokenLen = 16

// Config configures a dashboard.
type Config struct {
	// Addr is host:port to listen on (DefaultAddr when empty).
	Addr string
	// TokenFile holds the token a browser must show (first line). It is
	// required for an address other than loopback: the page shows the
	// run's load and its database.
	TokenFile string
	// Title names the run on the page.
	Title string
	// Every is the period of the points (a second when zero).
	Every time.Duration
	// View is the command's own panel (view.go): a sign-off's two
	// sides, a capacity search's stages, a soak's slopes, the probe's
	// database alone. Nil: a run's page, load and database only.
	View View
}

// Server is a running dashboard: it implements runner.Watch, so the
// runner hands it the engine's and the probes' live views.
type Server struct {
	cfg   Config
	token string
	srv   *http.Server
	addr  string
	stop  chan struct{}
	done  sync.WaitGroup

	mu        sync.Mutex
	snap      func() live.Snapshot // the engine's; nil before the load
	lastLoad  *rundir.LoadPoint
	status    func() probes.Status // the probes'; nil before they start
	start     time.Time
	seq       int64
	history   []json.RawMessage // every point's JSON since the start
	state     State
	stateRaw  json.RawMessage
	reportDir string
	scale     engine.ScaleFunc // nil: nothing to scale (control.go)
	control   *Control
	clients   map[*client]struct{}
	closed    bool
	// part is the part of the command playing now (Part: a sign-off's
	// side, a capacity stage), "" for a run; partStart is its first
	// point's time.
	part      string
	partStart time.Time
	live      liveLeft // the requests that left the stuck sessions (livejoin.go)
}

// client is one page's event stream.
type client struct {
	ch   chan []byte // whole SSE events
	gone chan struct{}
	once sync.Once
}

func (c *client) drop() { c.once.Do(func() { close(c.gone) }) }

// writeTimeout bounds one write of the stream to a page.
const writeTimeout = 10 * time.Second

// staleAfter is when the engine's last line (one a second) is no
// longer the current second's.
const staleAfter = 1500 * time.Millisecond

// clientBuffer is how many events a page may fall behind before it is
// dropped; its browser reconnects and gets the history again, so a slow
// page costs the run nothing.
const clientBuffer = 8

// Start checks cfg, listens, and starts serving and ticking. Everything
// that can refuse — a non-loopback address without a token, a bad token
// file, an address in use — fails here, before any load.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	loop, err := isLoopback(cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, stop: make(chan struct{}), clients: map[*client]struct{}{}, state: State{Title: cfg.Title}}
	if cfg.View != nil {
		cfg.View.attach(s)
		s.state.View = cfg.View.panel()
	}
	switch {
	case cfg.TokenFile != "":
		if s.token, err = readToken(cfg.TokenFile); err != nil {
			return nil, err
		}
	case !loop:
		return nil, fmt.Errorf("%w: %s would show the run's load and its database to anyone who reaches it: give --dashboard-token-file FILE, or bind a loopback address (%s)", ErrNotLoopback, cfg.Addr, DefaultAddr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w: %s: something already listens there (another leakbench or k6 dashboard?): choose another with --dashboard=ADDR: %w", ErrAddrInUse, cfg.Addr, err)
		}
		return nil, fmt.Errorf("dashboard address %s: %w", cfg.Addr, err)
	}
	s.addr = ln.Addr().String()
	s.stateRaw, _ = json.Marshal(s.state)
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
	s.done.Go(func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the run goes on without its dashboard
		}
	})
	s.done.Go(s.loop)
	return s, nil
}

// isLoopback says whether addr's host is a loopback address or
// localhost. An empty host is every interface: not loopback. Other names
// are not resolved: a name is not loopback until proven, so it needs the
// token.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("dashboard address %q: want HOST:PORT (e.g. %s): %w", addr, DefaultAddr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// readToken reads the token file's first line.
func readToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadToken, err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if len(tok) < minTokenLen {
		return "", fmt.Errorf("%w: %s: the token (first line) has %d characters, want %d or more", ErrBadToken, file, len(tok), minTokenLen)
	}
	return tok, nil
}

// Addr is the address the server listens on (its port chosen when Config
// gave port 0).
func (s *Server) Addr() string { return s.addr }

// URL is the page's address (the token is not in it: the user has it).
func (s *Server) URL() string { return "http://" + s.addr + "/" }

// Started implements engine.Watcher: the engine's live snapshot.
func (s *Server) Started(snap func() live.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap, s.lastLoad = snap, nil
}

// Second implements engine.Watcher: it keeps the engine's last line.
// The line the engine writes as the load ends covers the sliver of a
// second since the one before: its rate is noise (a few requests over
// milliseconds), so a line under half a second after the last is not
// shown.
func (s *Server) Second(p rundir.LoadPoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastLoad != nil && p.ElapsedSeconds-s.lastLoad.ElapsedSeconds < 0.5 {
		return
	}
	s.lastLoad = &p
}

// Probing implements runner.Watch: the probes' status.
func (s *Server) Probing(status func() probes.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// Finish takes a last point and tells the pages the run is over; dir is
// the run directory, whose report.html the page then links (at /report/;
// "" when there is none) and whose forensics name the requests that
// left the culprits (leftby.go), replacing the live join's (livejoin.go).
func (s *Server) Finish(dir string) {
	s.tick(time.Now())
	left := leftBy(dir) // files read before the lock: the pages' handlers wait on it
	s.live.close()
	s.mu.Lock()
	if dir != "" {
		s.state.LeftBy = left // the forensics' join replaces the live one
	}
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, rundir.HTMLFile)); err == nil {
			s.reportDir, s.state.Report = dir, "report/"+rundir.HTMLFile
		}
	}
	s.state.Done = true
	if v := s.cfg.View; v != nil {
		s.state.View = v.panel() // what was judged since the last point
	}
	s.stateRaw, _ = json.Marshal(s.state)
	ev := event("done", s.stateRaw)
	s.broadcastLocked(ev)
	s.mu.Unlock()
}

// Close stops ticking and serving, ending every page's stream. Safe on
// nil and more than once.
func (s *Server) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.live.close()
	for c := range s.clients {
		c.drop()
	}
	s.mu.Unlock()
	close(s.stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close()
	}
	s.done.Wait()
}

// loop takes a point every period until Close.
func (s *Server) loop() {
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.tick(now)
		}
	}
}

// tick reads the engine's and the probes' views as they are now and
// sends the point to every page. Nothing is sent before either has
// started: there is nothing to show while the stack starts.
func (s *Server) tick(now time.Time) {
	s.mu.Lock()
	snap, status, last, part := s.snap, s.status, s.lastLoad, s.part
	s.mu.Unlock()
	if snap == nil && status == nil {
		s.refreshView()
		return
	}
	if last != nil && now.Sub(last.Time) > staleAfter {
		// The load is over (or its clock stalled): its last second is
		// no longer this one's.
		last = nil
	}
	// The sources are read outside the lock: a snapshot merges the
	// engine's histograms and must not hold up Second.
	st := State{Title: s.cfg.Title}
	p := Point{Time: now.UTC(), Part: part}
	if snap != nil {
		p.Load = loadFigures(snap(), last, &st)
	}
	var stuck []probes.StuckTrace
	if status != nil {
		ps := status()
		p.DB, stuck = dbFigures(ps, &st), ps.Stuck
	}
	st.LeftBy = s.live.rows(now, stuck) // the join so far: a few new lines read
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Done || s.part != part {
		return // the last point was taken, or its part is over
	}
	if s.control != nil {
		c := *s.control
		st.Control = &c
	}
	if s.start.IsZero() {
		s.start = now
	}
	if s.partStart.IsZero() {
		s.partStart = now
	}
	s.seq++
	p.Seq, p.T = s.seq, seconds(now.Sub(s.start))
	if part != "" {
		p.PartT = seconds(now.Sub(s.partStart))
	}
	if v := s.cfg.View; v != nil {
		// The view only adds the point to sums it keeps: cheap, and
		// off the run's path (this is the dashboard's ticker).
		v.observe(&p, &st)
		st.View = v.panel()
	}
	pb, _ := json.Marshal(p) // plain values: cannot fail
	s.history = append(s.history, pb)
	s.state = st
	s.stateRaw, _ = json.Marshal(st)
	s.broadcastLocked(event("tick", tickJSON(pb, s.stateRaw)))
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// tickJSON is a tick event's data: {"point":…,"state":…}.
func tickJSON(point, state []byte) []byte {
	b := make([]byte, 0, len(point)+len(state)+20)
	b = append(b, `{"point":`...)
	b = append(b, point...)
	b = append(b, `,"state":`...)
	b = append(b, state...)
	return append(b, '}')
}

// historyJSON is the history event's data: {"points":[…],"state":…}.
func (s *Server) historyJSONLocked() []byte {
	var b []byte
	b = append(b, `{"points":[`...)
	for i, p := range s.history {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	b = append(b, `],"state":`...)
	b = append(b, s.stateRaw...)
	return append(b, '}')
}

// event is one server-sent event.
func event(name string, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(name)+16)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...) // JSON: one line
	return append(b, "\n\n"...)
}

// broadcastLocked queues ev for every page; a page too far behind is
// dropped (its browser reconnects and gets the history).
func (s *Server) broadcastLocked(ev []byte) {
	for c := range s.clients {
		select {
		case c.ch <- ev:
		default:
			delete(s.clients, c)
			c.drop()
		}
	}
}

// subscribe registers a page and returns the history it starts with.
func (s *Server) subscribe() (*client, []byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, false
	}
	c := &client{ch: make(chan []byte, clientBuffer), gone: make(chan struct{})}
	s.clients[c] = struct{}{}
	h := event("history", s.historyJSONLocked())
	if s.state.Done {
		h = append(h, event("done", s.stateRaw)...)
	}
	return c, h, true
}

func (s *Server) unsubscribe(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.clients, c)
}

// events streams the history, then each point as it is taken.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	c, hist, ok := s.subscribe()
	if !ok {
		http.Error(w, "the dashboard is closing", http.StatusServiceUnavailable)
		return
	}
	defer s.unsubscribe(c)
	// Each write has writeTimeout: a page whose reads stalled (its
	// socket buffers full) ends its handler rather than holding it.
	rc := http.NewResponseController(w)
	write := func(b []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// retry: a page that lost the stream asks again after 2 s.
	if err := write(append([]byte("retry: 2000\n\n"), hist...)); err != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return // the page went away: nothing to do
		case <-c.gone:
			return
		case ev := <-c.ch:
			if err := write(ev); err != nil {
				return
			}
		}
	}
}

// authorized checks the token where one is set: a bearer header, the
// cookie the page got, or ?token= (which sets the cookie).
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.token == "" {
		// Without a token the page is loopback's alone; a request naming
		// another host is a web page that rebound its name to 127.0.0.1
		// (DNS rebinding) to read the run from the user's browser.
		if ok, _ := isLoopback(hostPort(r.Host)); !ok {
			http.Error(w, "this dashboard answers only to a loopback host name (127.0.0.1, [::1], localhost)", http.StatusForbidden)
			return false
		}
		return true
	}
	given := ""
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		given = a
	} else if c, err := r.Cookie(cookieName); err == nil {
		given = c.Value
	} else if q := r.URL.Query().Get("token"); q != "" {
		given = q
		if subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) == 1 {
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
	}
	if subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) == 1 {
		return true
	}
	http.Error(w, "this dashboard needs its token: open it as /?token=TOKEN (the first line of --dashboard-token-file)", http.StatusUnauthorized)
	return false
}
