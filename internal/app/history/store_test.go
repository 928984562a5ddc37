package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fixtures are summary.json files of a real sign-off (profile ci) on a
// 2-core machine, as reports/testdata holds them.
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+"-summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func fixtureEntry(t testing.TB) *Entry {
	t.Helper()
	e, err := NewEntry(KindSignoff, readFixture(t, "after"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetBefore(readFixture(t, "before")); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNewEntryFigures(t *testing.T) {
	e := fixtureEntry(t)
	f := e.Figures
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("release p50", f.ReleaseP50Seconds, 0.226238)
	near("release p99", f.ReleaseP99Seconds, 1.083923)
	near("release max", f.ReleaseMaxSeconds, 1.098278)
	near("worst wait", f.PoolWorstWaitSeconds, 0.169908)
	near("latency p95", f.LatencyP95Ms, 1000.447)
	near("latency p99", f.LatencyP99Ms, 1001.471)
	near("error rate", f.ErrorRate, 205.0/3181)
	// 3181 requests between 17:41:50.895999109 and 17:42:12.373758589.
	near("request rate", f.RequestRate, 3181/21.47775948)
	if !f.ProbeRecorded || !f.LoadRecorded || f.Episodes != 562 || f.MaxStuckIdleInTx != 0 || f.StuckEpisodes != 0 || f.Requests != 3181 || f.PgBouncerMaxClWaiting != 26 {
		t.Errorf("figures: %+v", f)
	}
	if e.Profile != "ci" || e.Environment.Variant != "fixed" || e.Environment.VariantBefore != "commit-in-finally" || e.Environment.Provider != "local" || e.Leakbench.Version != "7d8a3f5-dirty" {
		t.Errorf("entry: profile %q env %+v tool %+v", e.Profile, e.Environment, e.Leakbench)
	}
	if e.Before == nil || e.Before.StuckEpisodes == 0 || e.Before.TimeoutTerminated == 0 {
		t.Errorf("before figures: %+v", e.Before)
	}
	if !json.Valid(e.Summary) || !strings.Contains(string(e.Summary), `"variant":"fixed"`) {
		t.Errorf("summary not kept: %.200s", e.Summary)
	}
}

func TestNewEntryRejectsBadSummaries(t *testing.T) {
	for name, raw := range map[string]string{
		"not JSON":       `{"schema_version":1,`,
		"schema 2":       `{"schema_version":2}`,
		"no version":     `{"name":"after"}`,
		"wrong type":     `{"schema_version":1,"probe":{"episodes":"many"}}`,
		"empty document": ``,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewEntry(KindRun, []byte(raw)); !errors.Is(err, ErrSummary) {
				t.Errorf("err = %v, want ErrSummary", err)
			}
		})
	}
}

// The pool section the report derives wins over the probe's raw figures.
func TestFiguresPreferPoolSection(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(readFixture(t, "after"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["pool"] = map[string]any{"exhausted": true, "reason": "service pool at its max (40/40) for 3 s", "worst_wait_seconds": 0.5,
		"pgbouncer_max_cl_waiting": 3, "app_pool_acquire_waits": 77, "app_pool_acquire_wait_seconds": 9.5, "app_pool_saturated_seconds": 3}
	raw, _ := json.Marshal(doc)
	f, err := FiguresOf(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !f.PoolExhausted || f.PoolWorstWaitSeconds != 0.5 || f.PgBouncerMaxClWaiting != 3 || f.AppPoolAcquireWaits != 77 || f.AppPoolSaturatedSeconds != 3 || f.PoolReason == "" {
		t.Errorf("figures: %+v", f)
	}
}

// Secrets never reach a history file, even when a summary carries one.
func TestEntryHoldsNoSecret(t *testing.T) {
	raw := strings.ReplaceAll(string(readFixture(t, "after")), "http://127.0.0.1:42817/mcp", "http://ci:hunter2secret@127.0.0.1:42817/mcp?token=tok3nvalue")
	raw = strings.Replace(raw, `"profile": "ci",`, `"profile": "ci", "dsn": "postgres://app:pgpassw0rd@127.0.0.1/app",`, 1)
	e, err := NewEntry(KindRun, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.Append(e)
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(st.Dir(), id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2secret", "tok3nvalue", "pgpassw0rd"} {
		if strings.Contains(string(file), secret) {
			t.Errorf("entry file holds %q", secret)
		}
	}
}

func TestAppendList(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "hist"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		e := fixtureEntry(t)
		e.Release = fmt.Sprintf("v1.%d", i)
		id, err := st.Append(e)
		if err != nil {
			t.Fatal(err)
		}
		if !ValidID(id) || e.ID != id || e.Recorded.IsZero() {
			t.Fatalf("id %q, entry id %q, recorded %v", id, e.ID, e.Recorded)
		}
		ids = append(ids, id)
	}
	entries, warnings, err := st.List()
	if err != nil || len(warnings) != 0 {
		t.Fatal(err, warnings)
	}
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3", len(entries))
	}
	for i, e := range entries {
		if e.ID != ids[i] || e.Release != fmt.Sprintf("v1.%d", i) {
			t.Errorf("entry %d: id %s release %s, want %s v1.%d", i, e.ID, e.Release, ids[i], i)
		}
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), MarkerFile)); err != nil {
		t.Error(err)
	}
	// Nothing temporary is left behind.
	des, _ := os.ReadDir(st.Dir())
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".tmp-") {
			t.Errorf("left behind: %s", de.Name())
		}
	}
}

// Two appends in the same nanosecond with the same random suffix: the
// second finds the name taken and picks another; nothing is overwritten.
func TestAppendNameCollision(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 8, 0, 0, 5, time.UTC)
	st.now = func() time.Time { return at }
	calls := 0
	st.random = func(b []byte) (int, error) {
		calls++
		for i := range b {
			b[i] = 0xab
		}
		if calls > 2 {
			b[0] = byte(calls)
		}
		return len(b), nil
	}
	a, b := fixtureEntry(t), fixtureEntry(t)
	a.Release, b.Release = "first", "second"
	id1, err := st.Append(a)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := st.Append(b)
	if err != nil {
		t.Fatal(err)
	}
	if id1 == id2 || calls != 3 {
		t.Fatalf("ids %s %s after %d draws", id1, id2, calls)
	}
	entries, _, _ := st.List()
	got := map[string]string{}
	for _, e := range entries {
		got[e.ID] = e.Release
	}
	if got[id1] != "first" || got[id2] != "second" {
		t.Errorf("entries: %v", got)
	}
}

func TestConcurrentAppendGoroutines(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				e := fixtureEntry(t)
				e.Release = fmt.Sprintf("w%d-%d", w, i)
				if _, err := st.Append(e); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkAll(t, st, writers*each)
}

// helperEnv makes the test binary an appending process (see TestMain).
const helperEnv = "LEAKBENCH_HISTORY_TEST_APPEND"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(appendProcess(spec))
	}
	os.Exit(m.Run())
}

// appendProcess appends N entries to DIR, from "DIR|N|LABEL".
func appendProcess(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[1])
	raw, err := os.ReadFile(filepath.Join("testdata", "after-summary.json"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err := Open(parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := range n {
		e, err := NewEntry(KindRun, raw)
		if err == nil {
			e.Release = fmt.Sprintf("%s-%d", parts[2], i)
			_, err = st.Append(e)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func TestConcurrentAppendProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs, each = 2, 60
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|p%d", helperEnv, dir, each, p))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process: %v", err)
		}
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries := checkAll(t, st, procs*each)
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Release] = true
	}
	for p := range procs {
		for i := range each {
			if !seen[fmt.Sprintf("p%d-%d", p, i)] {
				t.Errorf("entry p%d-%d missing", p, i)
			}
		}
	}
}

// checkAll: want entries, all readable, distinct, in ID order.
func checkAll(t *testing.T, st *Store, want int) []*Entry {
	t.Helper()
	entries, warnings, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	if len(entries) != want {
		t.Errorf("%d entries, want %d", len(entries), want)
	}
	ids := map[string]bool{}
	for i, e := range entries {
		if ids[e.ID] {
			t.Errorf("duplicate id %s", e.ID)
		}
		ids[e.ID] = true
		if i > 0 && entries[i-1].ID >= e.ID {
			t.Errorf("entries out of order: %s then %s", entries[i-1].ID, e.ID)
		}
	}
	return entries
}

// Files that are not entries of this version are skipped with a warning,
// never a crash; other files in the directory are ignored.
func TestListSkipsBadEntries(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good, err := st.Append(fixtureEntry(t))
	if err != nil {
		t.Fatal(err)
	}
	entryWith := func(mod func(map[string]any)) string {
		raw, _ := os.ReadFile(filepath.Join(st.Dir(), good+".json"))
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		mod(m)
		out, _ := json.Marshal(m)
		return string(out)
	}
	files := map[string]struct{ content, reason string }{
		"20261201T080000.000000001Z-000000000001.json": {`{"format":"leakbench-history","format_version":1,"id":`, "not valid JSON"},
		"20261201T080000.000000002Z-000000000002.json": {entryWith(func(m map[string]any) {
			m["format_version"] = 2
			m["id"] = "20261201T080000.000000002Z-000000000002"
		}), "newer than this leakbench reads"},
		"20261201T080000.000000003Z-000000000003.json": {entryWith(func(m map[string]any) {
			m["format_version"] = 0
			m["id"] = "20261201T080000.000000003Z-000000000003"
		}), "older than this leakbench reads"},
		"20261201T080000.000000004Z-000000000004.json": {`{"schema_version":1,"name":"after"}`, "not a leakbench-history entry"},
		"20261201T080000.000000005Z-000000000005.json": {entryWith(func(m map[string]any) { m["figures"] = "fast" }), "does not decode"},
		"20261201T080000.000000006Z-000000000006.json": {entryWith(func(m map[string]any) {}), "its file name"},
		"20261201T080000.000000007Z-000000000007.json": {"", "not valid JSON"},
	}
	for name, f := range files {
		if err := os.WriteFile(filepath.Join(st.Dir(), name), []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Ignored without a word: temporaries, notes, directories.
	for _, name := range []string{".tmp-20261201T080000.000000009Z-000000000009", "README.txt", "sub.json"} {
		if name == "sub.json" {
			if err := os.Mkdir(filepath.Join(st.Dir(), name), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(st.Dir(), name), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, warnings, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].ID != good {
		t.Errorf("entries: %d, want only %s", len(entries), good)
	}
	got := map[string]string{}
	for _, w := range warnings {
		got[w.File] = w.Reason
		if !strings.HasSuffix(w.String(), "(skipped)") {
			t.Errorf("warning text %q", w.String())
		}
	}
	if len(got) != len(files) {
		t.Errorf("%d warnings, want %d: %v", len(got), len(files), warnings)
	}
	for name, f := range files {
		if !strings.Contains(got[name], f.reason) {
			t.Errorf("%s: warning %q, want it to say %q", name, got[name], f.reason)
		}
	}
}

func TestOpenRefusesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil {
		t.Error("Open of a file: no error")
	}
	if _, err := Open(""); err == nil {
		t.Error("Open of \"\": no error")
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"20261201T080000.000000001Z-0123456789ab": true,
		"20261201T080000.000000001Z-0123456789a":  false,
		"20261201T080000.000000001Z-0123456789ag": false,
		"20261301T080000.000000001Z-0123456789ab": false,
		"../../etc/passwd":                        false,
		"":                                        false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v", id, got)
		}
	}
}
