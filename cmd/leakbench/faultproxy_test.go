package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFaultproxyBadInput: every mistake on faultproxy's command line is a
// usage error (exit 2) that says what is wrong, before anything listens.
func TestFaultproxyBadInput(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ok := "--link=db=127.0.0.1:0=127.0.0.1:6432"
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitUsage, "needs at least one --link"},
		{[]string{"--link", "db"}, exitUsage, "want NAME=LISTEN=UPSTREAM"},
		{[]string{"--link", "db=127.0.0.1:0=pgbouncer"}, exitUsage, "upstream address"},
		{[]string{"--link", "d b=:0=pgbouncer:6432"}, exitUsage, `name "d b"`},
		{[]string{ok, "--link", "db=127.0.0.1:0=postgres:5432"}, exitUsage, "link db given twice"},
		{[]string{ok, "--api", "8474"}, exitUsage, `--api "8474": want HOST:PORT`},
		{[]string{ok, "--listen", ":1"}, exitUsage, "flag provided but not defined"},
		{[]string{ok, "extra"}, exitUsage, `unexpected argument "extra"`},
		// Well formed, but the API's port is taken: the run fails (exit 1).
		{[]string{ok, "--api", taken.Addr().String()}, exitRunFailed, "toxiproxy API on " + taken.Addr().String()},
	} {
		err := cmdFaultproxy(context.Background(), testCLI(), tt.args)
		if code := exitCode(err); code != tt.code || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("faultproxy %q: exit %d (%v), want %d and …%s…", tt.args, code, err, tt.code, tt.want)
		}
	}
	if err := cmdFaultproxy(context.Background(), testCLI(), []string{"--help"}); !errors.Is(err, flag.ErrHelp) || exitCode(err) != exitOK {
		t.Errorf("--help: %v", err)
	}
}

// TestFaultproxyStopsOnSIGTERM: the command serves Toxiproxy's API and its
// links until SIGTERM (what docker stop sends), then exits 0 with the
// links' listeners closed.
func TestFaultproxyStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds leakbench")
	}
	api, link := freeLoopback(t), freeLoopback(t)
	cmd := exec.Command(buildCLI(t), "faultproxy", "--api", api, "--link", "db="+link+"=127.0.0.1:1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // the faultproxy this test started, by pid
			<-done
		}
	}()
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := client.Get("http://" + api + "/proxies/db")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the db proxy never showed on the API: %v; output:\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after SIGTERM: %v; output:\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10 s after SIGTERM; output:\n%s", out.String())
	}
	if c, err := net.Dial("tcp", link); err == nil {
		c.Close()
		t.Errorf("the db link still listens after faultproxy exited")
	}
}

// freeLoopback is a 127.0.0.1 address nothing listened on a moment ago.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
