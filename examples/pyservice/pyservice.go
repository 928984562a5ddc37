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
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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
		return "", fmt.Errorf("%w: no %s (%s): %w", ErrMissing, Python, installHint, err)
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
		return "", fmt.Errorf("%w: %s failed: %w: %s", ErrMissing, Python, err, bytes.TrimSpace(out))
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
			return fmt.Errorf("pyservice: exited before answering (%v): %s", s.waitErr, s.tail.String()) //nolint:errorlint // nil when it exited 0, which %w would print as %!w(<nil>)
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
				errs = append(errs, fmt.Errorf("pyservice: exited with %w: %s", s.waitErr, s.tail.String()))
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
