// Package chromium drives Debian's Chromium, headless, from a Go test over
// the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
// ended by NUL on fds 3 and 4), which needs no WebSocket client and no
// dependency: the few commands a test sends are all there is. The
// dashboard's page tests use it, and so does the runner's end-to-end
// sign-off, which screenshots the page for the docs.
//
//	b := chromium.Launch(t) // skips (or fails in CI) without Chromium
//	b.Open(srv.URL())
//	b.WaitPoints(2, 10*time.Second)
//	if msgs := b.Console(); len(msgs) > 0 { t.Errorf("console: %s", msgs) }
package chromium

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/testenv"
)

// Path is a headless-capable Chromium: $CHROMIUM, or Debian's chromium
// package; false when there is none. A test whose browser part is an
// extra (a screenshot) asks this and goes on without one.
func Path() (string, bool) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// Find is Path for a test that is about the browser: it skips with
// -short, and when none is installed (testenv.Missing: a failure where
// CI requires it).
func Find(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	p, ok := Path()
	if !ok {
		testenv.Missing(t, "chromium is not installed (Debian: apt-get install chromium; CI installs it)")
	}
	return p
}

// cdpMsg is a DevTools protocol message, either way.
type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Browser is one headless Chromium and its DevTools pipe.
type Browser struct {
	t       testing.TB
	in      io.WriteCloser
	mu      sync.Mutex
	id      int
	waiting map[int]chan cdpMsg
	events  []cdpMsg // console messages, exceptions, log entries
	session string
	done    sync.WaitGroup
}

// Launch starts Chromium; the test's cleanup closes it.
func Launch(t testing.TB) *Browser {
	t.Helper()
	bin := Find(t)
	dir := t.TempDir()
	toChrome, ours, err := os.Pipe() // Chromium reads fd 3
	if err != nil {
		t.Fatal(err)
	}
	theirs, fromChrome, err := os.Pipe() // Chromium writes fd 4
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-default-apps", "--remote-debugging-pipe", "--window-size=1400,1800"}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to sandbox as root.
	}
	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	_ = toChrome.Close()
	_ = fromChrome.Close()
	b := &Browser{t: t, in: ours, waiting: map[int]chan cdpMsg{}}
	b.done.Go(func() { b.read(theirs) })
	t.Cleanup(func() {
		_ = ours.Close() // Chromium exits when its pipe closes
		timer := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
		_ = cmd.Wait()
		timer.Stop()
		_ = theirs.Close()
		b.done.Wait()
	})
	return b
}

// read dispatches Chromium's messages: answers to their callers, events
// kept.
func (b *Browser) read(r io.Reader) {
	buf := make([]byte, 0, 1<<16)
	chunk := make([]byte, 1<<16)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			i := bytes.IndexByte(buf, 0)
			if i < 0 {
				break
			}
			var m cdpMsg
			if json.Unmarshal(buf[:i], &m) == nil {
				b.mu.Lock()
				if ch, ok := b.waiting[m.ID]; ok && m.ID != 0 {
					delete(b.waiting, m.ID)
					ch <- m
				} else {
					switch m.Method {
					case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded":
						m.Result, _ = json.Marshal(m.Params)
						b.events = append(b.events, m)
					}
				}
				b.mu.Unlock()
			}
			buf = buf[i+1:]
		}
		if err != nil {
			return
		}
	}
}

// Call sends a command (to the page's session once attached) and waits
// for its answer, decoded into result unless nil.
func (b *Browser) Call(method string, params any, result any) {
	b.t.Helper()
	b.mu.Lock()
	b.id++
	m := cdpMsg{ID: b.id, Method: method, Params: params, SessionID: b.session}
	if method == "Target.createTarget" || method == "Target.attachToTarget" {
		m.SessionID = ""
	}
	ch := make(chan cdpMsg, 1)
	b.waiting[m.ID] = ch
	b.mu.Unlock()
	raw, _ := json.Marshal(m)
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			b.t.Fatalf("%s: %s", method, a.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(a.Result, result); err != nil {
				b.t.Fatalf("%s: %v", method, err)
			}
		}
	// A minute: on two cores shared with other packages' stacks, a
	// browser busy redrawing once answered nothing for 30 s.
	case <-time.After(time.Minute):
		b.t.Fatalf("%s: no answer in a minute", method)
	}
}

// Open makes a page, listens to its console and log, and loads url.
func (b *Browser) Open(url string) {
	b.t.Helper()
	var target struct{ TargetID string }
	b.Call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	b.Call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	b.Call("Runtime.enable", nil, nil)
	b.Call("Log.enable", nil, nil)
	b.Call("Page.enable", nil, nil)
	b.Call("Page.navigate", map[string]any{"url": url}, nil)
}

// Viewport lays the open page out at width×height CSS pixels, as a
// laptop's screen: a screenshot then is that size.
func (b *Browser) Viewport(width, height int) {
	b.t.Helper()
	b.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
}

// Eval evaluates expr in the page into v.
func (b *Browser) Eval(expr string, v any) {
	b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	b.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		b.t.Fatalf("%s: %v", expr, r.ExceptionDetails)
	}
	if err := json.Unmarshal(r.Result.Value, v); err != nil {
		b.t.Fatalf("%s: %v (%s)", expr, err, r.Result.Value)
	}
}

// Points is how many points the dashboard's page holds (-1 before its
// script ran).
func (b *Browser) Points() int {
	var n int
	b.Eval("window.leakbench ? window.leakbench.points() : -1", &n)
	return n
}

// WaitPoints waits until the page holds at least n points, or within
// has passed; it returns how many it holds.
func (b *Browser) WaitPoints(n int, within time.Duration) int {
	b.t.Helper()
	end := time.Now().Add(within)
	for {
		got := b.Points()
		if got >= n || time.Now().After(end) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Console returns what the page said on its console or log.
func (b *Browser) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		out = append(out, fmt.Sprintf("%s %s", e.Method, e.Result))
	}
	return out
}

// Screenshot writes the page as PNG to file: the whole page, or with
// viewport only what the viewport shows (Viewport sets its size).
func (b *Browser) Screenshot(file string, viewport bool) {
	b.t.Helper()
	var r struct{ Data string }
	b.Call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": !viewport}, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil || len(png) < 1000 {
		b.t.Fatalf("screenshot: %v (%d bytes)", err, len(png))
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatalf("write the screenshot: %v", err)
	}
}
