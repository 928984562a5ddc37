package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The page's assets are embedded so that it works with no network: no
// CDN, nothing fetched at run time.
//
// The charts are Chart.js 3.9.1 (assets/chart.min.js, MIT; see
// assets/chart.LICENSE.txt), copied from Debian's libjs-chart.js package:
// a maintained library that Debian ships, which is how a file can reach
// this project offline (uPlot, smaller, is in no Debian package). It
// draws the axes, legends, stacking and tooltips; dashboard.js only feeds
// it points.
//
//go:embed assets/index.html assets/dashboard.js assets/chart.min.js
var assets embed.FS

// The tags of index.html that Export replaces with the scripts inline.
const (
	chartTag = `<script src="chart.min.js"></script>`
	appTag   = `<script src="dashboard.js"></script>`
)

func asset(name string) []byte {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // embedded at build time: cannot be missing
	}
	return b
}

// csp lets the served page load only its own files; the stream is
// same-origin.
const csp = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	static := func(name, ctype string) http.HandlerFunc {
		body := asset(name)
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Content-Security-Policy", csp)
			_, _ = w.Write(body)
		}
	}
	mux.HandleFunc("GET /{$}", static("index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /dashboard.js", static("dashboard.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /chart.min.js", static("chart.min.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /export", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = s.Export(w)
	})
	mux.HandleFunc("GET /report/{file}", s.report)
	mux.HandleFunc("POST /scale", s.scaleHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(w, r) {
			mux.ServeHTTP(w, r)
		}
	})
}

// report serves the finished report's page and its plots from the run
// directory: only files at its top whose names end in .html, .png or
// .svg, so the samples and logs are not served.
func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	dir := s.reportDir
	s.mu.Unlock()
	name := r.PathValue("file")
	switch ext := path.Ext(name); {
	case dir == "":
		http.Error(w, "the report is not written yet", http.StatusNotFound)
		return
	case strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, "."),
		ext != ".html" && ext != ".png" && ext != ".svg":
		http.NotFound(w, r)
		return
	}
	http.ServeFile(w, r, filepath.Join(dir, name))
}

// Export writes the page as it stands as one self-contained HTML file:
// the scripts and every point inline, no stream, nothing fetched.
func (s *Server) Export(w io.Writer) error {
	s.mu.Lock()
	data := s.historyJSONLocked()
	s.mu.Unlock()
	page := asset("index.html")
	// The JSON escapes <, > and & (encoding/json), so it cannot close the
	// script element; Chart.js's file holds no "</script" either
	// (TestExportIsSelfContained).
	inline := func(js []byte) []byte {
		return append(append([]byte("<script>\n"), js...), "\n</script>"...)
	}
	page = bytes.Replace(page, []byte(chartTag), inline(asset("chart.min.js")), 1)
	app := append([]byte("window.LEAKBENCH_EXPORT = "), data...)
	app = append(append(app, ";\n"...), asset("dashboard.js")...)
	page = bytes.Replace(page, []byte(appTag), inline(app), 1)
	if _, err := w.Write(page); err != nil {
		return fmt.Errorf("export the dashboard: %w", err)
	}
	return nil
}

// ExportFile writes Export's page to file.
func (s *Server) ExportFile(file string) error {
	var b bytes.Buffer
	if err := s.Export(&b); err != nil {
		return err
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("export the dashboard: %w", err)
	}
	return nil
}

const cookieName = "leakbench_dashboard"

// hostPort gives a Host header without a port one, for isLoopback.
func hostPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), "80")
}
