package probes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSummarizer(t *testing.T) {
	a := newSummarizer(100*time.Millisecond, time.Second, 3*time.Second)
	a.addSample(Sample{States: StateCounts{IdleInTx: 2, IdleInTxAborted: 1}, StuckIdleInTx: 1,
		PgBouncer: &PoolSample{ClWaiting: 0, MaxWaitSeconds: 0.2}})
	a.addSample(Sample{States: StateCounts{IdleInTx: 1}, StuckIdleInTx: 2,
		PgBouncer: &PoolSample{ClWaiting: 4, MaxWaitSeconds: 1.5}})
	a.addSample(Sample{Error: "postgres: connection refused"})

	add := func(hold float64, query, app, reason string) {
		a.addEpisode(Episode{HoldSeconds: hold, Query: query, ApplicationName: app, EndReason: reason})
	}
	const members, tokens = `SELECT 1 FROM email_team_members WHERE user_email = 'a'`, `SELECT id FROM api_tokens WHERE token_hash = 'h'`
	for i := 1; i <= 96; i++ { // 96 quick releases: 10 ms … 960 ms
		add(float64(i)/100, `SELECT 'quick'`, "gw", EndReleased)
	}
	add(3.0, members, "gw", EndTimeout)
	add(2.0, `SELECT 1 FROM email_team_members WHERE user_email = 'b'`, "gw", EndReleased)
	add(5.0, tokens, "gw", EndTerminated) // one episode, longest hold
	add(1.0, members, "other-app", EndOpenAtEnd)

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
	want := []Culprit{
		{Fingerprint(members), members, "gw", 2, 5, 3},
		{Fingerprint(tokens), tokens, "gw", 1, 5, 5},
		{Fingerprint(members), members, "other-app", 1, 1, 1},
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

func TestStartRejectsUnparsableDSN(t *testing.T) {
	const secret = "hunter2-secret"
	_, err := Start(t.Context(), Config{DSN: "postgres://u:" + secret + "@host:notaport/db"})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("error %v: want one that does not quote the password", err)
	}
}

func TestRecorder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r, err := openRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.sample(Sample{Time: t0, States: StateCounts{IdleInTx: 2}})
	r.episode(Episode{PID: 7, EndReason: EndTimeout})
	r.tick(time.Now()) // under a second since open: nothing flushed yet
	if b, _ := os.ReadFile(filepath.Join(dir, SamplesFile)); len(b) != 0 {
		t.Errorf("flushed before a second passed: %q", b)
	}
	r.tick(time.Now().Add(flushEvery))
	if b, _ := os.ReadFile(filepath.Join(dir, SamplesFile)); !strings.Contains(string(b), `"idle_in_tx":2`) {
		t.Errorf("not flushed after a second: %q", b)
	}
	r.sample(Sample{Error: "gap"})
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
	samples := readJSONL[Sample](t, filepath.Join(dir, SamplesFile))
	episodes := readJSONL[Episode](t, filepath.Join(dir, EpisodesFile))
	if len(samples) != 2 || samples[1].Error != "gap" || len(episodes) != 1 || episodes[0].EndReason != EndTimeout {
		t.Errorf("read back %+v and %+v", samples, episodes)
	}
}
