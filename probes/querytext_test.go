package probes_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// The values the test sessions' statements carry, as drivers that
// interpolate them (psycopg2, JDBC's simple protocol) send them.
var secrets = []string{"sk_live_SECRET123", "alice@example.com", "hunter2-PASSWORD-SECRET"}

// TestQueryTextsOnStack: sessions sit idle in transaction, past the stuck
// threshold, after statements with secrets in their literals and control
// characters in an identifier, while a probe writes its run directory; then
// the run is reported. By default no file of the directory holds a secret;
// with KeepQueryText the probe's own files do. No file holds a raw control
// character either way.
func TestQueryTextsOnStack(t *testing.T) {
	// Serial: it sets environment variables (t.Setenv), which a parallel test cannot.
	// The sessions stay idle in transaction until the deferred ROLLBACK,
	// after the report is rendered: the timeout must outlast that on a
	// loaded machine (under -race it took more than 5 s).
	env := probes.StartStackForTest(t, stack.Config{IdleInTxTimeout: time.Minute, Users: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Setenv(reports.StepSummaryEnv, "")
	statements := []string{
		`SELECT 'sk_live_SECRET123' , 'alice@example.com'`,
		`ALTER ROLE CURRENT_USER PASSWORD 'hunter2-PASSWORD-SECRET'`,
		"SELECT 1 AS \"x\x1b[2J\x1b]0;pwned\x07\u202e\"",
	}
	for _, keep := range []bool{false, true} {
		name := "masked"
		if keep {
			name = "KeepQueryText"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			// The default stuck threshold: the report of a run directory
			// without config.json uses it too.
			p, err := probes.Start(ctx, probes.Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN, RunDir: dir,
				KeepQueryText: keep})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer p.Stop()
			for _, q := range statements {
				c := probes.ConnectForTest(t, ctx, env.AppDSN)
				for _, q := range []string{"BEGIN", q} {
					if _, err := c.Exec(ctx, q); err != nil {
						t.Fatalf("%q: %v", q, err)
					}
				}
				defer func() {
					if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
						t.Errorf("ROLLBACK: %v", err)
					}
				}()
			}
			for deadline := time.Now().Add(5 * time.Second); p.Snapshot().StuckIdleInTx < len(statements); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the probe never saw %d stuck sessions: %+v", len(statements), p.Snapshot())
				}
			}
			time.Sleep(200 * time.Millisecond)
			// Episodes still open at Stop are written as open_at_end, with
			// the same query text handling.
			sum, err := p.Stop()
			if err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if sum.StuckEpisodes != len(statements) || len(sum.Culprits) != len(statements) {
				t.Fatalf("%d stuck episodes, culprits %+v; want %d", sum.StuckEpisodes, sum.Culprits, len(statements))
			}
			if err := probes.WriteSummaryFile(filepath.Join(dir, rundir.ProbeSummaryFile), sum); err != nil {
				t.Fatal(err)
			}
			if _, err := reports.RenderRun(dir); err != nil {
				t.Fatalf("RenderRun: %v", err)
			}
			files := readTree(t, dir)
			for _, f := range []string{rundir.EpisodesFile, rundir.SamplesFile, rundir.ProbeSummaryFile, rundir.SummaryFile, rundir.ReportFile, rundir.HTMLFile} {
				if _, ok := files[f]; !ok {
					t.Fatalf("no %s in the run directory (has %d files)", f, len(files))
				}
			}
			if html := files[rundir.HTMLFile]; !bytes.Contains(html, []byte("SELECT ?, ?")) {
				t.Errorf("%s does not name the culprit SELECT ?, ?", rundir.HTMLFile)
			}
			for name, b := range files {
				if strings.HasSuffix(name, ".png") {
					continue // binary; the SVGs carry the same text
				}
				for _, s := range secrets {
					raw := keep && (name == rundir.EpisodesFile || name == rundir.ProbeSummaryFile)
					if got := bytes.Contains(b, []byte(s)); got != raw {
						t.Errorf("%s holds %q: %v, want %v", name, s, got, raw)
					}
				}
				// Raw, and JSON-escaped, the text may stay in the probe's own
				// episodes when kept; nothing else may carry it.
				if name == rundir.EpisodesFile && keep {
					continue
				}
				if i := bytes.IndexFunc(b, func(r rune) bool { return r == 0x1b || r == 0x07 || r == 0x202e }); i >= 0 {
					t.Errorf("%s holds a raw control character: …%q…", name, b[max(i-20, 0):min(i+20, len(b))])
				}
				{
					for _, esc := range []string{`\u001b`, `\u0007`, `\u202e`, `\x1b`, "&#27;", "&#x1b;"} {
						if bytes.Contains(bytes.ToLower(b), []byte(esc)) {
							t.Errorf("%s holds an escaped control character %s", name, esc)
						}
					}
				}
			}
		})
	}
}

// readTree reads every file under dir, by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || strings.Contains(strings.Join(keys(files), " "), ".tmp") {
		t.Fatalf("run directory: %v", keys(files))
	}
	return files
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
