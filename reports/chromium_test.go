package reports

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	chromiumtest "github.com/leakbench/leakbench/internal/testing/chromium"
)

// chromium finds a headless-capable Chromium (internal/testing/chromium,
// which the dashboard's tests drive over the DevTools protocol; these
// tests run it as a command: --dump-dom, --screenshot).
func chromium(t *testing.T) string { return chromiumtest.Find(t) }

// browse opens page in headless Chromium with args (--dump-dom,
// --screenshot=…) and returns its stdout, its log (console messages
// included) and every http(s) URL in its network log.
func browse(t *testing.T, bin, page string, args ...string) (stdout, log string, urls []string) {
	t.Helper()
	dir := t.TempDir()
	netlog := filepath.Join(dir, "netlog.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-default-apps", "--enable-logging=stderr", "--v=0", "--log-net-log=" + netlog,
		"--window-size=1400,4200"}
	if os.Geteuid() == 0 {
		base = append(base, "--no-sandbox") // Chromium refuses to sandbox as root.
	}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), page)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	raw, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("chromium wrote no network log: %v", err)
	}
	for _, m := range urlRE.FindAllStringSubmatch(string(raw), -1) {
		if !browserOwn.MatchString(m[1]) {
			urls = append(urls, m[0])
		}
	}
	return out.String(), errb.String(), urls
}

var (
	urlRE = regexp.MustCompile(`"(?:https?|wss?)://([^/"\s:]+)[^"\s]*`)
	// Chromium's own background traffic (update checks, accounts), which
	// the flags above reduce but do not silence; not the page's.
	browserOwn = regexp.MustCompile(`(^|\.)(google\.com|googleapis\.com|gvt1\.com|gstatic\.com|googleusercontent\.com)$`)
	consoleRE  = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)
)

// TestHTMLInChromium loads the sign-off report in headless Chromium: no
// network request, no console message (the report's Content-Security-Policy
// turns any attempt to load something into one), and the plots are in the
// DOM and on screen.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	t.Setenv(StepSummaryEnv, "")
	out := t.TempDir()
	copyRun(t, "before", filepath.Join(out, "before"))
	copyRun(t, "after", filepath.Join(out, "after"))
	if _, err := RenderSignoff(out); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(out, rundir.HTMLFile)

	dom, log, urls := browse(t, bin, page, "--dump-dom")
	if len(urls) > 0 {
		t.Errorf("the report made network requests: %v", urls)
	}
	if msgs := consoleRE.FindAllString(log, -1); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(msgs, "\n"))
	}
	for _, want := range []string{"PASS — the leak shows in before and is gone in after", `id="summary"`, `id="plot-stuck"`, `id="plot-release"`, "Culprits", "email_team_members"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n != 4 {
		t.Errorf("DOM has %d <svg> plots, want 4 (stuck, states, release, pgbouncer)", n)
	}

	shot := filepath.Join(t.TempDir(), "shot.png")
	browse(t, bin, page, "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 3000 {
		t.Fatalf("screenshot is %v", b)
	}
	// The plots draw stuck sessions in vermilion and released ones in
	// blue (Okabe & Ito's, as package plots has them); the page's own
	// styles use neither.
	colVermilion, colBlue := color.RGBA{213, 94, 0, 255}, color.RGBA{0, 114, 178, 255}
	var vermilion, blue int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			switch {
			case near(r, g, bl, colVermilion.R, colVermilion.G, colVermilion.B):
				vermilion++
			case near(r, g, bl, colBlue.R, colBlue.G, colBlue.B):
				blue++
			}
		}
	}
	if vermilion < 5000 || blue < 5000 {
		t.Errorf("plots not visible in the screenshot: %d vermilion and %d blue pixels", vermilion, blue)
	}
}

func near(r, g, b uint32, wr, wg, wb uint8) bool {
	d := func(a uint32, w uint8) bool { v := int(a>>8) - int(w); return v > -12 && v < 12 }
	return d(r, wr) && d(g, wg) && d(b, wb)
}

// TestChromiumDetectsLoads proves the checks above can fail: a page that
// loads an image from the network shows up in the network log, and one
// whose policy blocks it shows up as a console message.
func TestChromiumDetectsLoads(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	pages := map[string]string{
		"open.html":    `<!DOCTYPE html><p>x</p><img src="http://127.0.0.1:9/leak.png">`,
		"blocked.html": `<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src 'none'"><img src="http://127.0.0.1:9/leak.png">`,
	}
	for name, html := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, urls := browse(t, bin, "file://"+filepath.Join(dir, "open.html"), "--dump-dom"); len(urls) == 0 {
		t.Error("the network log did not show the page's request")
	}
	if _, log, _ := browse(t, bin, "file://"+filepath.Join(dir, "blocked.html"), "--dump-dom"); !consoleRE.MatchString(log) {
		t.Error("the blocked load left no console message")
	}
}
