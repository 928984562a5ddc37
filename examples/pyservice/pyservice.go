// Package pyservice starts and stops pyservice, a small MCP service written
// the way leakbench's users write theirs — Python, FastAPI, SQLAlchemy 1.4,
// psycopg2, uvicorn, sync handlers and a request-scoped get_db dependency —
// in one of three variants: held-while-waiting (the token lookup's session,
// left in a transaction, held for the whole request: the MCP server PR #917
// review finding), held-across-upstream (a transaction held open across a
// slow upstream HTTP call: ContextForge #2518) and fixed.
//
// Nothing in it is instrumented for leakbench: what leakbench learns about
// it, it learns from PostgreSQL. The service's ground-truth log (one JSON
// line per pool checkout: the backend pid, when it was checked out and in,
// and the request it served; see README.md) is what leakbench's findings are
// measured against; ReadGroundTruth parses it.
//
// The service runs on Debian's packages (python3-fastapi, python3-sqlalchemy,
// python3-psycopg2, python3-uvicorn) with /usr/bin/python3. Start returns an
// error wrapping ErrMissing when they are not there; tests turn it into
// testenv.Missing.
//
//	dsn, _ := pyservice.CreateDatabase(ctx, env.PostgresDSN, "pyservice")
//	tokens, _ := pyservice.Seed(ctx, dsn, 12)
//	svc, err := pyservice.Start(ctx, pyservice.Options{DSN: dsn, Variant: pyservice.HeldWhileWaiting, GroundTruth: path})
//	defer svc.Close()
package pyservice

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed *.py
var scripts embed.FS

// Python is the interpreter the service runs on: Debian's, which has the
// packages (a pyenv or venv python on PATH usually does not).
const Python = "/usr/bin/python3"

// The variants (Options.Variant).
const (
	HeldWhileWaiting   = "held-while-waiting"
	HeldAcrossUpstream = "held-across-upstream"
	Fixed              = "fixed"
)

// ApplicationName is the application_name the service's connections carry
// unless Options.NoApplicationName.
const ApplicationName = "pyservice"

// The beginnings of the service's queries as pg_stat_activity shows them
// (psycopg2 inlines the parameters: the token is there in clear).
const (
	// AuthQueryPrefix: the bearer-token lookup of every MCP request, the
	// last query of held-while-waiting's stuck sessions.
	AuthQueryPrefix = "SELECT u.id, u.email FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token = "
	// RateQueryPrefix: call_upstream's rate-limit check, the last query of
	// held-across-upstream's stuck sessions.
	RateQueryPrefix = "SELECT count(*) FROM upstream_calls WHERE user_id = "
)

// ErrMissing is wrapped by the errors of Check and Start when /usr/bin/python3
// or one of the service's modules is not installed.
var ErrMissing = errors.New("pyservice's Python stack is missing")

// debianPackages names the package of each module the service imports.
var debianPackages = []struct{ module, pkg string }{
	{"fastapi", "python3-fastapi"},
	{"sqlalchemy", "python3-sqlalchemy"},
	{"psycopg2", "python3-psycopg2"},
	{"uvicorn", "python3-uvicorn"},
}

const installHint = "apt-get install python3 python3-fastapi python3-sqlalchemy python3-psycopg2 python3-uvicorn"

var checkOnce = sync.OnceValues(check)

// Check reports whether /usr/bin/python3 can import the service's four
// modules, and their versions ("fastapi 0.92.0, sqlalchemy 1.4.46, ...").
// Its error wraps ErrMissing and names the Debian packages to install.
func Check() (string, error) { return checkOnce() }

func check() (string, error) {
	if _, err := os.Stat(Python); err != nil {
		return "", fmt.Errorf("%w: no %s (%s): %v", ErrMissing, Python, installHint, err)
	}
	var prog strings.Builder
	prog.WriteString("import sys\nmissing = []\nvers = []\n")
	for _, m := range debianPackages {
		fmt.Fprintf(&prog, "try:\n    import %[1]s\n    vers.append('%[1]s ' + getattr(%[1]s, '__version__', '?').split(' ')[0])\nexcept Exception as e:\n    missing.append('%[1]s (%[2]s): ' + repr(e))\n", m.module, m.pkg)
	}
	prog.WriteString("print(', '.join(vers))\nif missing:\n    print('; '.join(missing))\n    sys.exit(3)\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Python, "-I", "-c", prog.String())
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return "", fmt.Errorf("%w: %s cannot import %s (%s)", ErrMissing, Python, lines[len(lines)-1], installHint)
	case err != nil:
		return "", fmt.Errorf("%w: %s failed: %v: %s", ErrMissing, Python, err, bytes.TrimSpace(out))
	}
	return lines[0], nil
}

// Options configure the service. DSN is required; every other zero value
// means its default.
type Options struct {
	// DSN reaches PostgreSQL (a libpq URL or key=value string), directly
	// rather than through PgBouncer. It is handed over in the environment,
	// never on the command line. Its database needs Seed's schema.
	DSN string
	// Variant is HeldWhileWaiting, HeldAcrossUpstream or Fixed (default).
	Variant string
	// PoolSize is SQLAlchemy's pool_size (max_overflow is always 0).
	// Default 10.
	PoolSize int
	// PoolTimeout is SQLAlchemy's pool_timeout: how long a request waits
	// for a connection before it fails with a pool timeout. Default 5 s.
	PoolTimeout time.Duration
	// NoApplicationName connects without application_name (the service
	// then looks like most services do in pg_stat_activity). A DSN that
	// sets one itself still sets it.
	NoApplicationName bool
	// GroundTruth is the path of the ground-truth log (JSON lines,
	// appended; see ReadGroundTruth). Empty: none is kept.
	GroundTruth string
	// PollInterval is wait_for_run's pause between polls. Default 0.5 s.
	PollInterval time.Duration
	// WaitDefault is how long wait_for_run waits when the call does not
	// say (its seconds argument). Default 5 s.
	WaitDefault time.Duration
	// UpstreamURL is what call_upstream calls (GET ?delay=SECONDS).
	// Default: the service's own /upstream.
	UpstreamURL string
	// Log, if set, receives the service's log (its stderr) as it is
	// written; the end of it is kept either way for errors (Service.Log).
	Log io.Writer
	// StartTimeout bounds how long Start waits for the service to answer.
	// Default 30 s (a cold Python start on a busy machine is slow).
	StartTimeout time.Duration
}

// Service is a running pyservice.
type Service struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// BaseURL is http://127.0.0.1:PORT (/healthz, /upstream).
	BaseURL string
	// Pid is the Python process's pid, also its process group's id.
	Pid int
	// Variant is the variant it runs.
	Variant string
	// GroundTruth is the ground-truth log's path ("" if none).
	GroundTruth string
	// Versions are the Python modules' versions.
	Versions string

	cmd       *exec.Cmd
	dir       string // the scripts, written out; removed by Close
	tail      *tailBuffer
	done      chan struct{}
	waitErr   error
	closeOnce sync.Once
	closeErr  error
}

// Start starts the service on a free 127.0.0.1 port, in its own process
// group, and returns once it answers. On error nothing is left running.
// Close stops it.
func Start(ctx context.Context, opts Options) (*Service, error) {
	versions, err := Check()
	if err != nil {
		return nil, err
	}
	if opts.DSN == "" {
		return nil, errors.New("pyservice: no DSN")
	}
	if opts.Variant == "" {
		opts.Variant = Fixed
	}
	switch opts.Variant {
	case HeldWhileWaiting, HeldAcrossUpstream, Fixed:
	default:
		return nil, fmt.Errorf("pyservice: unknown variant %q (want %s, %s or %s)", opts.Variant, HeldWhileWaiting, HeldAcrossUpstream, Fixed)
	}
	if opts.PoolSize == 0 {
		opts.PoolSize = 10
	}
	if opts.PoolTimeout == 0 {
		opts.PoolTimeout = 5 * time.Second
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	if opts.WaitDefault == 0 {
		opts.WaitDefault = 5 * time.Second
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.PoolSize < 1 || opts.PoolTimeout < 0 || opts.PollInterval < 0 || opts.WaitDefault < 0 {
		return nil, fmt.Errorf("pyservice: pool size %d, pool timeout %s, poll interval %s, wait default %s: want positive values", opts.PoolSize, opts.PoolTimeout, opts.PollInterval, opts.WaitDefault)
	}
	if opts.GroundTruth != "" {
		if opts.GroundTruth, err = filepath.Abs(opts.GroundTruth); err != nil {
			return nil, err
		}
	}

	dir, err := os.MkdirTemp("", "pyservice-")
	if err != nil {
		return nil, err
	}
	s := &Service{Variant: opts.Variant, GroundTruth: opts.GroundTruth, Versions: versions, dir: dir, tail: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	started := false
	defer func() {
		if !started {
			_ = s.Close()
		}
	}()
	if err := writeScripts(dir); err != nil {
		return nil, err
	}

	// The listening socket is made here and inherited (fd 3): no race for
	// the port between picking it and the service binding it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lf, err := ln.(*net.TCPListener).File()
	_ = ln.Close() // the duplicate in lf keeps the socket
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	s.BaseURL = "http://127.0.0.1:" + strconv.Itoa(port)
	s.URL = s.BaseURL + "/mcp"

	args := []string{"-s", filepath.Join(dir, "app.py"),
		"--variant", opts.Variant,
		"--fd", "3", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--pool-size", strconv.Itoa(opts.PoolSize),
		"--pool-timeout", seconds(opts.PoolTimeout),
		"--poll-interval", seconds(opts.PollInterval),
		"--wait-default", seconds(opts.WaitDefault),
	}
	if opts.NoApplicationName {
		args = append(args, "--no-application-name")
	}
	if opts.GroundTruth != "" {
		args = append(args, "--ground-truth", opts.GroundTruth)
	}
	if opts.UpstreamURL != "" {
		args = append(args, "--upstream-url", opts.UpstreamURL)
	}
	cmd := exec.Command(Python, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(opts.DSN)
	cmd.ExtraFiles = []*os.File{lf}
	var logw io.Writer = s.tail
	if opts.Log != nil {
		logw = io.MultiWriter(s.tail, opts.Log)
	}
	cmd.Stdout, cmd.Stderr = logw, logw
	// Its own process group, so that Close reaches everything it starts;
	// killed with this process if this process dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pyservice: start %s: %w", Python, err)
	}
	_ = lf.Close() // the service has its own copy now
	s.cmd, s.Pid = cmd, cmd.Process.Pid
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx, opts.StartTimeout); err != nil {
		return nil, err
	}
	started = true
	return s, nil
}

// childEnv is this process's environment without what would change the
// service's connections (PG*) or its Python, plus the DSN.
func childEnv(dsn string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "PYTHON") || strings.HasPrefix(k, "PYSERVICE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PYSERVICE_DSN="+dsn, "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// writeScripts writes the embedded service into dir.
func writeScripts(dir string) error {
	return fs.WalkDir(scripts, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := scripts.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, path), b, 0o600)
	})
}

// waitReady polls /healthz until the service answers as the variant asked
// for, the process exits, ctx ends or timeout passes.
func (s *Service) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.BaseURL+"/healthz", nil)
		if resp, err := client.Do(req); err == nil {
			var h struct {
				OK      bool   `json:"ok"`
				Variant string `json:"variant"`
			}
			err := json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if err == nil && h.OK && h.Variant == s.Variant {
				return nil
			}
			return fmt.Errorf("pyservice: %s answered /healthz %d (variant %q), not the service asked for", s.BaseURL, resp.StatusCode, h.Variant)
		}
		select {
		case <-s.done:
			return fmt.Errorf("pyservice: exited before answering (%v): %s", s.waitErr, s.tail.String())
		case <-ctx.Done():
			return fmt.Errorf("pyservice: no answer on %s within %s: %w; its log: %s", s.BaseURL, timeout, ctx.Err(), s.tail.String())
		case <-tick.C:
		}
	}
}

// stopGrace is how long Close waits after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// Close stops the service — SIGTERM to its process group, SIGKILL after
// a few seconds — and removes its files. It is idempotent and safe on a
// Service Start failed to start. The error says when the service did not
// stop cleanly.
func (s *Service) Close() error {
	if s == nil {
		return nil
	}
	s.closeOnce.Do(func() { s.closeErr = s.stop() })
	return s.closeErr
}

func (s *Service) stop() error {
	var errs []error
	if s.cmd != nil {
		_ = syscall.Kill(-s.Pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(stopGrace):
			errs = append(errs, fmt.Errorf("pyservice: did not stop within %s of SIGTERM: killed", stopGrace))
			_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
			<-s.done
		}
		// Anything of the group still there (nothing, normally) goes too.
		_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
		var ee *exec.ExitError
		if errors.As(s.waitErr, &ee) && len(errs) == 0 {
			if st, ok := ee.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGTERM {
				errs = append(errs, fmt.Errorf("pyservice: exited with %v: %s", s.waitErr, s.tail.String()))
			}
		}
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// Exited is closed when the service's process has exited.
func (s *Service) Exited() <-chan struct{} { return s.done }

// Log returns the end of what the service wrote (its stderr), at most 16 KiB.
func (s *Service) Log() string { return s.tail.String() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// schema is the service's tables. Seed creates them if they are not there.
const schema = `
CREATE TABLE IF NOT EXISTS users (
	id         bigserial PRIMARY KEY,
	email      text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS api_tokens (
	token      text PRIMARY KEY,
	user_id    bigint NOT NULL REFERENCES users (id),
	active     boolean NOT NULL DEFAULT true,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS api_tokens_user_id ON api_tokens (user_id);
CREATE TABLE IF NOT EXISTS runs (
	id         bigserial PRIMARY KEY,
	user_id    bigint NOT NULL REFERENCES users (id),
	name       text NOT NULL DEFAULT 'run',
	created_at timestamptz NOT NULL DEFAULT now(),
	done_at    timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS upstream_calls (
	id          bigserial PRIMARY KEY,
	user_id     bigint NOT NULL REFERENCES users (id),
	url         text NOT NULL,
	started_at  timestamptz NOT NULL,
	finished_at timestamptz,
	status      integer
);
CREATE INDEX IF NOT EXISTS upstream_calls_user_started ON upstream_calls (user_id, started_at);
`

// UserEmail is the email of the i-th user Seed makes (from 0).
func UserEmail(i int) string { return fmt.Sprintf("user%03d@pyservice.test", i) }

// Seed creates the service's schema in dsn's database (users, api_tokens,
// runs, upstream_calls; kept if there) and makes sure users users exist
// (UserEmail(0) …), each given a new random bearer token. It returns the
// tokens in user order: tokens[i] is UserEmail(i)'s. The tokens are
// secrets.
func Seed(ctx context.Context, dsn string, users int) (tokens []string, err error) {
	if users < 1 {
		return nil, fmt.Errorf("pyservice: seed %d users: want at least one", users)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("pyservice: seed: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, schema); err != nil {
		return nil, fmt.Errorf("pyservice: seed: create the schema: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for i := range users {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO users (email) VALUES ($1)
			ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email RETURNING id`, UserEmail(i)).Scan(&id); err != nil {
			return nil, fmt.Errorf("pyservice: seed: user %d: %w", i, err)
		}
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		token := "pys_" + hex.EncodeToString(b)
		if _, err := tx.Exec(ctx, `INSERT INTO api_tokens (token, user_id) VALUES ($1, $2)`, token, id); err != nil {
			return nil, fmt.Errorf("pyservice: seed: token of user %d: %w", i, err)
		}
		tokens = append(tokens, token)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("pyservice: seed: %w", err)
	}
	return tokens, nil
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CreateDatabase creates, through adminDSN (a role that may create roles
// and databases: a superuser), a login role and a database both called
// name, the database owned by the role, and returns a DSN of the role for
// that database on the same server (a password of its own, sslmode as
// adminDSN's, no application_name). The role is reused if it exists; a
// database of that name that exists already is an error.
func CreateDatabase(ctx context.Context, adminDSN, name string) (string, error) {
	if !identRE.MatchString(name) {
		return "", fmt.Errorf("pyservice: database name %q: want lower-case letters, digits and _", name)
	}
	cfg, err := pgx.ParseConfig(adminDSN)
	if err != nil {
		return "", fmt.Errorf("pyservice: admin DSN: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("pyservice: connect as admin: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	password := hex.EncodeToString(b)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	verb := "CREATE"
	if exists {
		verb = "ALTER"
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`%s ROLE %s LOGIN PASSWORD '%s'`, verb, name, password)); err != nil {
		return "", fmt.Errorf("pyservice: role %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, name, name)); err != nil {
		return "", fmt.Errorf("pyservice: database %s: %w", name, err)
	}
	sslmode := "disable"
	if cfg.TLSConfig != nil {
		sslmode = "require"
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(name, password),
		Host:     net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
		Path:     "/" + name,
		RawQuery: "sslmode=" + sslmode,
	}
	return u.String(), nil
}

// Checkout is one line of the ground-truth log: a connection checked out
// of the service's pool, and the request it was checked out for.
type Checkout struct {
	// Pid is the PostgreSQL backend's pid (0 if the driver could not
	// tell: a broken connection).
	Pid int `json:"pid"`
	// CheckedOut and CheckedIn are when the connection left the pool and
	// came back (after the pool's ROLLBACK on return). CheckedIn is zero
	// when it was still out as the service stopped (OpenAtExit).
	CheckedOut time.Time `json:"checkout"`
	CheckedIn  time.Time `json:"checkin"`
	OpenAtExit bool      `json:"open_at_exit,omitempty"`
	// Variant is the service's variant.
	Variant string `json:"variant"`
	// Request is the request the checkout served; nil for a checkout
	// outside any request.
	Request *Request `json:"request"`
}

// Held is how long the connection was out of the pool (0 if still out).
func (c Checkout) Held() time.Duration {
	if c.CheckedIn.IsZero() {
		return 0
	}
	return c.CheckedIn.Sub(c.CheckedOut)
}

// Request is an HTTP request as the ground-truth log names it.
type Request struct {
	// ID is the service's own id of the request (req-000001, ...), unique
	// within one run of the service.
	ID         string `json:"id"`
	HTTPMethod string `json:"http_method"`
	Path       string `json:"path"`
	// Method is the JSON-RPC method, Tool the tool of a tools/call
	// (empty when none or not JSON-RPC).
	Method string `json:"method"`
	Tool   string `json:"tool"`
	// RPCID is the JSON-RPC id, as sent.
	RPCID json.RawMessage `json:"rpc_id"`
	// Session is the Mcp-Session-Id the request carried (or that its
	// initialize was given).
	Session string `json:"session"`
	// User is the bearer token's user (its email); empty when the request
	// was not authenticated (no token, an unknown one, or the lookup
	// failed).
	User string `json:"user"`
	// Traceparent is the W3C traceparent header (or params._meta's) the
	// client sent, if any.
	Traceparent string `json:"traceparent"`
	// Start is when the service got the request, End when the last byte
	// of its answer was handed to the server.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Status is the HTTP status answered; Error the JSON-RPC error or the
	// tool's error, if any.
	Status int    `json:"status"`
	Error  string `json:"error"`
}

// ReadGroundTruth parses a ground-truth log. A malformed line is an error
// naming it (the service writes and flushes whole lines: one is broken
// only if the service was killed while writing it).
func ReadGroundTruth(path string) ([]Checkout, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Checkout
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c Checkout
		if err := json.Unmarshal(line, &c); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}
