package probes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/poolmetrics"
	"github.com/leakbench/leakbench/probes/querytext"
)

func TestSummarizer(t *testing.T) {
	a := newSummarizer(100*time.Millisecond, time.Second, 3*time.Second)
	a.addSample(rundir.Sample{States: rundir.StateCounts{IdleInTx: 2, IdleInTxAborted: 1}, StuckIdleInTx: 1,
		PgBouncer: &rundir.PoolSample{ClWaiting: 0, MaxWaitSeconds: 0.2}})
	a.addSample(rundir.Sample{States: rundir.StateCounts{IdleInTx: 1}, StuckIdleInTx: 2,
		PgBouncer: &rundir.PoolSample{ClWaiting: 4, MaxWaitSeconds: 1.5, Exhausted: true}})
	a.addSample(rundir.Sample{Error: "postgres: connection refused"})

	add := func(hold float64, query, app, reason string) {
		a.addEpisode(rundir.Episode{HoldSeconds: hold, Query: query, ApplicationName: app, EndReason: reason})
	}
	const members, tokens = `SELECT 1 FROM email_team_members WHERE user_email = 'a'`, `SELECT id FROM api_tokens WHERE token_hash = 'h'`
	for i := 1; i <= 96; i++ { // 96 quick releases: 10 ms … 960 ms
		add(float64(i)/100, `SELECT 'quick'`, "gw", rundir.EndReleased)
	}
	add(3.0, members, "gw", rundir.EndTimeout)
	add(2.0, `SELECT 1 FROM email_team_members WHERE user_email = 'b'`, "gw", rundir.EndReleased)
	add(5.0, tokens, "gw", rundir.EndTerminated) // one episode, longest hold
	add(1.0, members, "other-app", rundir.EndOpenAtEnd)

	s := a.summary()
	if s.Samples != 3 || s.FailedSamples != 1 || s.MaxIdleInTx != 3 || s.MaxStuckIdleInTx != 2 {
		t.Errorf("samples %d failed %d max idle in tx %d max stuck %d; want 3 1 3 2", s.Samples, s.FailedSamples, s.MaxIdleInTx, s.MaxStuckIdleInTx)
	}
	if !s.PgBouncerSampled || !s.PoolExhausted || s.PgBouncerMaxClWaiting != 4 || s.PgBouncerMaxWaitSeconds != 1.5 {
		t.Errorf("PgBouncer: %+v", s)
	}
	if s.Episodes != 100 || s.StuckEpisodes != 4 || s.TimeoutTerminated != 1 || s.LongestHoldSeconds != 5 {
		t.Errorf("episodes %d stuck %d timeout %d longest %g; want 100 4 1 5", s.Episodes, s.StuckEpisodes, s.TimeoutTerminated, s.LongestHoldSeconds)
	}
	// Nearest rank over 100 holds: the 50th and the 99th smallest.
	if s.ReleaseP50Seconds != 0.5 || s.ReleaseP99Seconds != 3 || s.ReleaseMaxSeconds != 5 {
		t.Errorf("release p50 %g p99 %g max %g; want 0.5 3 5", s.ReleaseP50Seconds, s.ReleaseP99Seconds, s.ReleaseMaxSeconds)
	}
	want := []rundir.Culprit{
		{Fingerprint: querytext.Fingerprint(members), ExampleQuery: querytext.Mask(members), ApplicationName: "gw", Episodes: 2, TotalHoldSeconds: 5, MaxHoldSeconds: 3},
		{Fingerprint: querytext.Fingerprint(tokens), ExampleQuery: querytext.Mask(tokens), ApplicationName: "gw", Episodes: 1, TotalHoldSeconds: 5, MaxHoldSeconds: 5},
		{Fingerprint: querytext.Fingerprint(members), ExampleQuery: querytext.Mask(members), ApplicationName: "other-app", Episodes: 1, TotalHoldSeconds: 1, MaxHoldSeconds: 1},
	}
	if len(s.Culprits) != len(want) {
		t.Fatalf("culprits %+v, want %+v", s.Culprits, want)
	}
	for i := range want {
		if s.Culprits[i] != want[i] {
			t.Errorf("culprit %d: %+v, want %+v", i, s.Culprits[i], want[i])
		}
	}
	if s.IdleInTxTimeoutSeconds != 3 || s.StuckAfterSeconds != 1 || s.IntervalSeconds != 0.1 {
		t.Errorf("settings: %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"release_p99_seconds":3`) || !strings.Contains(string(b), `"total_hold_seconds":5`) {
		t.Errorf("JSON %s, %v", b, err)
	}
}

// TestSummarize: folding the files gives what the Poller's summarizer
// gave while it ran.
func TestSummarize(t *testing.T) {
	samples := []rundir.Sample{
		{Time: at(0), States: rundir.StateCounts{IdleInTx: 2}, StuckIdleInTx: 1, PgBouncer: &rundir.PoolSample{ClWaiting: 2, Exhausted: true, Xacts: 3}},
		{Time: at(0.1), Gap: true, Error: "postgres: refused", Database: &rundir.DatabaseSample{XactCommit: 4, SessionsFatal: 1}},
		{Time: at(1), AppPool: &rundir.AppPoolSample{Acquired: 5, Max: 5, AcquireWaitsTotal: 2}},
		{Time: at(2), AppPool: &rundir.AppPoolSample{Acquired: 5, Max: 5, AcquireWaitsTotal: 6}},
	}
	episodes := []rundir.Episode{
		{HoldSeconds: 3, Query: "SELECT 1", ApplicationName: "gw", EndReason: rundir.EndTimeout},
		{HoldSeconds: 0.2, Query: "SELECT 2", EndReason: rundir.EndReleased},
	}
	a := newSummarizer(50*time.Millisecond, 2*time.Second, 3*time.Second)
	a.scrapeInterval = 500 * time.Millisecond
	for _, e := range episodes {
		a.addEpisode(e)
	}
	for _, s := range samples {
		a.addSample(s)
	}
	want := a.summary()
	got := Summarize(Config{Interval: 50 * time.Millisecond, StuckAfter: 2 * time.Second, ScrapeInterval: 500 * time.Millisecond},
		3*time.Second, samples, episodes)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summarize:\n got %+v\nwant %+v", got, want)
	}
	if got.Episodes != 2 || got.StuckEpisodes != 1 || len(got.Culprits) != 1 || got.AppPoolSaturatedSeconds != 1 || got.AppPoolAcquireWaits != 4 {
		t.Errorf("Summarize: %+v", got)
	}
}

func TestSummarizerEmpty(t *testing.T) {
	s := newSummarizer(time.Second, time.Second, 0).summary()
	if s.Episodes != 0 || s.ReleaseP99Seconds != 0 || s.Culprits == nil {
		t.Errorf("empty summary %+v: want zeros and an empty, non-nil culprit list", s)
	}
}

func TestParseSetting(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "-1": 0, "3s": 3 * time.Second, "120s": 2 * time.Minute, "2min": 2 * time.Minute,
		"500ms": 500 * time.Millisecond, "1500": 1500 * time.Millisecond, "1h": time.Hour, "1d": 24 * time.Hour,
		"250us": 250 * time.Microsecond,
	} {
		if got, err := parseSetting(in); err != nil || got != want {
			t.Errorf("parseSetting(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "3 weeks", "s"} {
		if got, err := parseSetting(in); err == nil {
			t.Errorf("parseSetting(%q) = %s, want an error", in, got)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, {DSN: "x", Interval: time.Millisecond}, {DSN: "x", StuckAfter: -time.Second}} {
		if err := c.withDefaults().validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if c := (Config{DSN: "x"}).withDefaults(); c.validate() != nil || c.Interval != DefaultInterval || c.StuckAfter != DefaultStuckAfter {
		t.Errorf("defaults: %+v", c)
	}
}

// TestScrapeConfig: a bad scrape target or mapping is ErrConfig without
// the password, and the Config a run records masks it too.
func TestScrapeConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"not a URL", Config{DSN: "x", Scrape: []poolmetrics.Target{{URL: "localhost:8080/metrics"}}}, "want http://host:port/path"},
		{"password masked", Config{DSN: "x", Scrape: []poolmetrics.Target{{URL: "ftp://u:hunter22@h/metrics"}}}, "u:xxxxx@h"},
		{"unknown mapping", Config{DSN: "x", Scrape: []poolmetrics.Target{{URL: "http://h/metrics", Mapping: "c3p0"}}}, `unknown pool mapping "c3p0" (known: auto, gateway, go_sql, hikaricp, sqlalchemy, otel, otel_legacy)`},
		{"empty mapping", Config{DSN: "x", Mappings: map[string]poolmetrics.Mapping{"m": {Idle: "x"}}}, `mapping "m" names neither`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Start(context.Background(), c.cfg)
			if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter22") {
				t.Errorf("error %v, want ErrConfig containing %q", err, c.want)
			}
		})
	}
	b, err := json.Marshal(Config{DSN: "x", Scrape: []poolmetrics.Target{{URL: "http://u:hunter22@h/metrics", Mapping: "go_sql"}}})
	if err != nil || !strings.Contains(string(b), `"scrape":[{"url":"http://u:xxxxx@h/metrics","mapping":"go_sql"}]`) {
		t.Errorf("marshalled config %s (%v), want the scrape URL's password masked", b, err)
	}
	// A token in the query, as some exporters take one, is masked too.
	b, err = json.Marshal(Config{DSN: "x", Scrape: []poolmetrics.Target{{URL: "http://h/metrics?token=s3cr3t-tok&x=1"}}})
	if err != nil || strings.Contains(string(b), "s3cr3t-tok") || !strings.Contains(string(b), "x=1") {
		t.Errorf("marshalled config %s (%v), want the scrape URL's token masked and the rest kept", b, err)
	}
}

func TestStartRejectsUnparsableDSN(t *testing.T) {
	const secret = "hunter2-secret"
	_, err := Start(t.Context(), Config{DSN: "postgres://u:" + secret + "@host:notaport/db"})
	if err == nil || !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), secret) {
		t.Errorf("error %v: want ErrConfig, not quoting the password", err)
	}
}

func TestRecorder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r, err := openRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.sample(&rundir.Sample{Time: t0, States: rundir.StateCounts{IdleInTx: 2}})
	r.episode(&rundir.Episode{PID: 7, EndReason: rundir.EndTimeout})
	// Written through at once: nothing waits in a buffer for a crash to lose.
	if b, _ := os.ReadFile(filepath.Join(dir, rundir.SamplesFile)); !strings.HasSuffix(string(b), "\"idle_in_tx\":2,\"idle_in_tx_aborted\":0,\"other\":0},\"stuck_idle_in_tx\":0,\"oldest_idle_in_tx_seconds\":0,\"oldest_xact_seconds\":0}\n") {
		t.Errorf("not written through: %q", b)
	}
	r.sample(&rundir.Sample{Error: "gap"})
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	samples := readJSONL[rundir.Sample](t, filepath.Join(dir, rundir.SamplesFile))
	episodes := readJSONL[rundir.Episode](t, filepath.Join(dir, rundir.EpisodesFile))
	if len(samples) != 2 || samples[1].Error != "gap" || len(episodes) != 1 || episodes[0].EndReason != rundir.EndTimeout {
		t.Errorf("read back %+v and %+v", samples, episodes)
	}
}

func TestSummarizerSources(t *testing.T) {
	a := newSummarizer(100*time.Millisecond, time.Second, 3*time.Second)
	a.scrapeInterval = time.Second
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// PgBouncer: waiting clients at 0.2–0.4 s and again at 0.7 s.
	for i, waiting := range []int{0, 0, 2, 1, 1, 0, 0, 3, 0} {
		a.addSample(rundir.Sample{Time: at(float64(i) / 10), PgBouncer: &rundir.PoolSample{ClWaiting: waiting, Exhausted: waiting > 0, Xacts: 5, WaitSeconds: 0.25}})
	}
	// Waiting for a server connection being opened is no exhaustion.
	a.addSample(rundir.Sample{Time: at(1), PgBouncer: &rundir.PoolSample{ClWaiting: 2, SvLogin: 1}})
	// A long gap before a waiting sample counts for at most a second.
	a.addSample(rundir.Sample{Time: at(5), PgBouncer: &rundir.PoolSample{ClWaiting: 1, Exhausted: true}})
	// pg_stat_database deltas, and one gap.
	a.addSample(rundir.Sample{Database: &rundir.DatabaseSample{XactCommit: 10, XactRollback: 1, IdleInTxSeconds: 1.5, SessionsFatal: 1}})
	a.addSample(rundir.Sample{Database: &rundir.DatabaseSample{XactCommit: 5, SessionsKilled: 2, SessionsAbandoned: 1}})
	a.addSample(rundir.Sample{Gap: true, Error: "postgres: connection refused", TookSeconds: 0.3, SkippedTicks: 2})
	// The app pool: saturated (10/10) from 11 s to 13 s, counters reset by
	// a service restart at 14 s.
	for i, p := range []rundir.AppPoolSample{
		{Acquired: 4, Max: 10, AcquireWaitsTotal: 1, AcquireWaitSecondsTotal: 0.5},
		{Acquired: 10, Max: 10, AcquireWaitsTotal: 5, AcquireWaitSecondsTotal: 2, UnclosedSessions: 3},
		{Acquired: 10, Max: 10, AcquireWaitsTotal: 9, AcquireWaitSecondsTotal: 4, CanceledAcquiresTotal: 2},
		{Acquired: 10, Max: 10, AcquireWaitsTotal: 12, AcquireWaitSecondsTotal: 5, CanceledAcquiresTotal: 2},
		{Acquired: 1, Max: 10, AcquireWaitsTotal: 2, AcquireWaitSecondsTotal: 0.5},
	} {
		a.addSample(rundir.Sample{Time: at(10 + float64(i)), AppPool: &p})
	}
	for _, e := range []rundir.Episode{{HoldSeconds: 6, EndReason: rundir.EndTimeout}, {HoldSeconds: 6, EndReason: rundir.EndTimeout}, {HoldSeconds: 0.1, EndReason: rundir.EndReleased}} {
		a.addEpisode(e)
	}
	s := a.summary()
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !s.PoolExhausted || s.PoolExhaustedSpans != 3 || !near(s.PoolExhaustedSeconds, 0.4+1) || s.PgBouncerMaxClWaiting != 3 ||
		s.PgBouncerXactsTotal != 45 || !near(s.PgBouncerWaitSecondsTotal, 2.25) {
		t.Errorf("PgBouncer: exhausted %v, %d spans, %.2fs, max waiting %d, xacts %d, wait %.2fs; want true, 3, 1.4s, 3, 45, 2.25s",
			s.PoolExhausted, s.PoolExhaustedSpans, s.PoolExhaustedSeconds, s.PgBouncerMaxClWaiting, s.PgBouncerXactsTotal, s.PgBouncerWaitSecondsTotal)
	}
	if !s.DatabaseSampled || s.XactCommitTotal != 15 || s.XactRollbackTotal != 1 || s.IdleInTxSecondsTotal != 1.5 ||
		s.SessionsFatalTotal != 1 || s.SessionsKilledTotal != 2 || s.SessionsAbandonedTotal != 1 || s.TimeoutUnconfirmed != 1 {
		t.Errorf("pg_stat_database: %+v", s)
	}
	if s.GapSamples != 1 || s.FailedSamples != 1 || s.SlowSamples != 1 || s.SkippedTicks != 2 || s.MaxSampleSeconds != 0.3 {
		t.Errorf("gaps %d failed %d slow %d skipped %d slowest %g", s.GapSamples, s.FailedSamples, s.SlowSamples, s.SkippedTicks, s.MaxSampleSeconds)
	}
	if !s.AppPoolSampled || s.AppPoolMaxAcquired != 10 || s.AppPoolMax != 10 || !near(s.AppPoolSaturatedSeconds, 3) ||
		!near(s.AppPoolAcquireWaits, 4+4+3+2) || !near(s.AppPoolAcquireWaitSeconds, 1.5+2+1+0.5) || s.AppPoolCanceledAcquires != 2 || s.AppPoolMaxUnclosedSessions != 3 {
		t.Errorf("app pool: %+v", s)
	}
	if s.EndReasons[rundir.EndTimeout] != 2 || s.EndReasons[rundir.EndReleased] != 1 {
		t.Errorf("end reasons %v", s.EndReasons)
	}
}

// TestSummarizerAppPoolUseTime: the service's own use time (OTel's
// db.client.connection.use_time) is the increase of its histogram's sum
// and count over the run, a restart handled, and their mean.
func TestSummarizerAppPoolUseTime(t *testing.T) {
	a := newSummarizer(100*time.Millisecond, time.Second, 3*time.Second)
	a.scrapeInterval = time.Second
	for i, p := range []rundir.AppPoolSample{
		{Max: 5, UsesTotal: 100, UseSecondsTotal: 10},
		{Max: 5, UsesTotal: 110, UseSecondsTotal: 12},
		{Max: 5, UsesTotal: 4, UseSecondsTotal: 2}, // restarted: 4 more, 2 s more
	} {
		a.addSample(rundir.Sample{Time: t0.Add(time.Duration(i) * time.Second), AppPool: &p})
	}
	s := a.summary()
	if s.AppPoolUses != 14 || math.Abs(s.AppPoolUseSeconds-4) > 1e-9 || math.Abs(s.AppPoolUseMeanSeconds-4.0/14) > 1e-9 {
		t.Errorf("uses %g, use seconds %g, mean %g; want 14, 4, %g", s.AppPoolUses, s.AppPoolUseSeconds, s.AppPoolUseMeanSeconds, 4.0/14)
	}
}

// TestSummarizerAppPoolUseQuantiles: with the use time's buckets the
// summary has its p50 and p95 over the run (the increase of the buckets,
// a restart handled); without them it has none, and summary.json names
// none.
func TestSummarizerAppPoolUseQuantiles(t *testing.T) {
	hist := func(c ...float64) *rundir.Histogram {
		return &rundir.Histogram{UpperBounds: []float64{0.1, 1}, Cumulative: c[:2], Count: c[2]}
	}
	a := newSummarizer(100*time.Millisecond, time.Second, 3*time.Second)
	a.scrapeInterval = time.Second
	// Increases: 10, 18 of 20, then restarted: 0, 0 of 20. Run: 10, 18 of
	// 40. p50: rank 20 is beyond the 18 at or under 1 s, in +Inf: at
	// least 1 s. p95 likewise.
	for i, p := range []rundir.AppPoolSample{
		{Max: 5, UsesTotal: 100, UseSecondsTotal: 10, UseHistogram: hist(50, 90, 100)},
		{Max: 5, UsesTotal: 120, UseSecondsTotal: 12, UseHistogram: hist(60, 108, 120)},
		{Max: 5, UsesTotal: 20, UseSecondsTotal: 40, UseHistogram: hist(0, 0, 20)}, // restarted
	} {
		a.addSample(rundir.Sample{Time: t0.Add(time.Duration(i) * time.Second), AppPool: &p})
	}
	q := a.summary().AppPoolUseQuantiles
	if q == nil || q.Observations != 40 || !q.P50.AtLeast || q.P50.Seconds != 1 || !q.P95.AtLeast {
		t.Fatalf("got %+v; want 40 checkouts, p50 and p95 at least 1 s", q)
	}
	// Without the restart: 10, 18 of 20: p50 rank 10 at the top of
	// (0, 0.1]: 0.1; p95 rank 19 in +Inf.
	b := newSummarizer(100*time.Millisecond, time.Second, 3*time.Second)
	for i, h := range []*rundir.Histogram{hist(50, 90, 100), hist(60, 108, 120)} {
		b.addSample(rundir.Sample{Time: t0.Add(time.Duration(i) * time.Second), AppPool: &rundir.AppPoolSample{Max: 5, UseHistogram: h}})
	}
	if q := b.summary().AppPoolUseQuantiles; q == nil || q.Observations != 20 || math.Abs(q.P50.Seconds-0.1) > 1e-9 || q.P50.AtLeast || !q.P95.AtLeast {
		t.Errorf("got %+v; want p50 0.1 s, p95 at least 1 s, of 20", q)
	}
	c := newSummarizer(100*time.Millisecond, time.Second, 3*time.Second)
	for i := range 2 {
		c.addSample(rundir.Sample{Time: t0.Add(time.Duration(i) * time.Second), AppPool: &rundir.AppPoolSample{Max: 5, UsesTotal: float64(10 * i), UseSecondsTotal: float64(i)}})
	}
	sum := c.summary()
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AppPoolUseQuantiles != nil || strings.Contains(string(js), "quantiles") {
		t.Errorf("no buckets, yet %s", js)
	}
}

func TestWarnings(t *testing.T) {
	var got []rundir.Warning
	w := newWarnings(func(x rundir.Warning) { got = append(got, x) })
	errA := errors.New("pgbouncer: not connected (next attempt in 100ms): refused")
	errB := errors.New("pgbouncer: not connected (next attempt in 200ms): refused")
	w.report("pgbouncer", nil, at(0))
	w.report("pgbouncer", errA, at(1))
	w.report("pgbouncer", errB, at(2)) // the same failure: no new warning
	w.report("postgres", errors.New("postgres: password=hunter2 refused"), at(2))
	w.report("pgbouncer", nil, at(3))
	if len(got) != 3 || got[0].Message != errA.Error() || got[1].Source != "postgres" || !got[2].Recovered || got[2].Source != "pgbouncer" {
		t.Fatalf("notified %+v", got)
	}
	if strings.Contains(got[1].Message, "hunter2") {
		t.Errorf("password in %q", got[1].Message)
	}
	all := w.all()
	if len(all) != 2 || all[0].Count != 2 || !all[0].Last.Equal(at(2)) || len(w.current()) != 1 {
		t.Errorf("all %+v, current %+v", all, w.current())
	}
}

// TestWarningsBounded: failures that differ in more than numbers, one kind
// after another, are kept as at most maxWarningKinds kinds.
func TestWarningsBounded(t *testing.T) {
	w := newWarnings(nil)
	for i := range maxWarningKinds + 50 {
		w.report("scrape http://127.0.0.1:1/metrics", fmt.Errorf("unexpected series %s", strings.Repeat("x", i)), at(float64(i)))
	}
	all := w.all()
	last := all[len(all)-1]
	if len(all) != maxWarningKinds+1 || last.Count != 50 || !strings.HasPrefix(last.Message, otherFailures) {
		t.Errorf("%d kinds, last %+v; want %d, the last counting the other 50", len(all), last, maxWarningKinds+1)
	}
}

// TestWriteSummaryFile: the summary is replaced whole or not at all, and
// no temporary file is left behind either way.
func TestWriteSummaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, rundir.ProbeSummaryFile)
	s := newSummarizer(time.Second, time.Second, 0).summary()
	s.Samples = 7
	if err := WriteSummaryFile(path, &s); err != nil {
		t.Fatal(err)
	}
	check := func(wantSamples int) {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got rundir.ProbeSummary
		if err := json.Unmarshal(raw, &got); err != nil || got.Samples != wantSamples {
			t.Fatalf("%s: %v, samples %d; want %d", path, err, got.Samples, wantSamples)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("directory holds %d entries, want only %s: %v", len(ents), rundir.ProbeSummaryFile, ents)
		}
	}
	check(7)
	s.Samples = 8
	if err := WriteSummaryFile(path, &s); err != nil {
		t.Fatal(err)
	}
	check(8)
	// A summary that cannot be encoded leaves the previous one.
	s.Samples, s.MaxSampleSeconds = 9, math.NaN()
	if err := WriteSummaryFile(path, &s); err == nil {
		t.Error("NaN encoded without an error")
	}
	check(8)
	s.MaxSampleSeconds = 0
	if err := WriteSummaryFile(filepath.Join(dir, "missing", rundir.ProbeSummaryFile), &s); err == nil {
		t.Error("no error writing into a missing directory")
	}
}

// TestSummarizerBounded: past maxExactHolds episodes the percentiles come
// from the histogram, to three significant digits, and the memory stays
// put; past maxCulprits culprits the smallest make room.
func TestSummarizerBounded(t *testing.T) {
	a := newSummarizer(100*time.Millisecond, time.Second, 0)
	const n = 3 * maxExactHolds
	var all []float64
	for i := range n {
		hold := 0.001 * float64(1+(i*7919)%n) // 1 ms … n ms, shuffled
		all = append(all, hold)
		a.addEpisode(rundir.Episode{HoldSeconds: hold, Query: "SELECT 1", EndReason: rundir.EndReleased})
	}
	slices.Sort(all)
	s := a.summary()
	if len(a.holds.exact) != maxExactHolds || s.Episodes != n {
		t.Fatalf("%d exact holds kept for %d episodes; want %d", len(a.holds.exact), s.Episodes, maxExactHolds)
	}
	for _, c := range []struct {
		p         float64
		got, want float64
	}{{50, s.ReleaseP50Seconds, percentile(all, 50)}, {99, s.ReleaseP99Seconds, percentile(all, 99)}} {
		if math.Abs(c.got-c.want) > c.want/1000 {
			t.Errorf("p%g %.6f, exact %.6f: off by more than 0.1%%", c.p, c.got, c.want)
		}
	}
	if s.ReleaseMaxSeconds != all[n-1] || s.LongestHoldSeconds != all[n-1] {
		t.Errorf("max %g longest %g, want exactly %g", s.ReleaseMaxSeconds, s.LongestHoldSeconds, all[n-1])
	}

	a = newSummarizer(100*time.Millisecond, time.Second, 0)
	for range 10 {
		a.addEpisode(rundir.Episode{HoldSeconds: 5, Query: "SELECT 'the culprit'", EndReason: rundir.EndTimeout})
	}
	for i := range maxCulprits + 20 {
		a.addEpisode(rundir.Episode{HoldSeconds: 2, Query: fmt.Sprintf("SELECT * FROM tmp_%d", i), EndReason: rundir.EndReleased})
	}
	s = a.summary()
	if len(s.Culprits) != maxCulprits || s.Culprits[0].Fingerprint != "SELECT ?" || s.Culprits[0].Episodes != 10 {
		t.Errorf("%d culprits, first %+v; want %d, SELECT ? with 10", len(s.Culprits), s.Culprits[0], maxCulprits)
	}
	if slices.ContainsFunc(s.Culprits, func(c rundir.Culprit) bool { return c.Fingerprint == "SELECT * FROM tmp_0" }) {
		t.Error("the oldest of the smallest culprits was kept")
	}
}
