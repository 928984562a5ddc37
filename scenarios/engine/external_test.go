package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// scalingWatcher is a recordingWatcher that gets the engine's Scale.
type scalingWatcher struct {
	recordingWatcher
	scaleMu sync.Mutex
	scale   ScaleFunc
}

func (w *scalingWatcher) Scalable(f ScaleFunc, ts []ScaleTarget) {
	if len(ts) != 1 || ts[0] != (ScaleTarget{Name: "s", VUs: 1, MaxVUs: 4}) {
		panic(fmt.Sprintf("scale targets %+v", ts))
	}
	w.scaleMu.Lock()
	defer w.scaleMu.Unlock()
	w.scale = f
}

// TestExternallyControlled: users start at vus, follow a change while
// the scenario runs, refuse one above maxVUs, below 0 or for another
// scenario, and every change is in load.jsonl and the result.
func TestExternallyControlled(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	p := mustParse(t, "scenarios:\n  s: {executor: externally-controlled, vus: 1, maxVUs: 4, duration: 3s, flow: [ping, think: 20ms]}\n")
	w := &scalingWatcher{}
	dir := t.TempDir()
	done := make(chan *rundir.LoadResult, 1)
	go func() {
		res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL, Watch: w, RunDir: dir})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var scale ScaleFunc
	for deadline := time.Now().Add(10 * time.Second); scale == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		w.scaleMu.Lock()
		scale = w.scale
		w.scaleMu.Unlock()
	}
	if scale == nil {
		t.Fatal("the watcher never got Scale")
	}
	time.Sleep(1200 * time.Millisecond)
	for _, bad := range []struct {
		scenario string
		vus      int
	}{{"", 5}, {"", -1}, {"other", 2}} {
		if _, err := scale(bad.scenario, bad.vus, ScaleByCommand); !errors.Is(err, ErrScale) {
			t.Errorf("scale(%q, %d): %v, want ErrScale", bad.scenario, bad.vus, err)
		}
	}
	ch, err := scale("", 3, ScaleByPage)
	if err != nil {
		t.Fatal(err)
	}
	if ch.From != 1 || ch.To != 3 || ch.By != ScaleByPage || ch.Scenario != "s" || ch.ElapsedSeconds < 1 {
		t.Errorf("change %+v", ch)
	}
	res := <-done
	if _, err := scale("s", 2, ScaleByCommand); !errors.Is(err, ErrScale) || !strings.Contains(err.Error(), "over") {
		t.Errorf("scale after the end: %v", err)
	}
	if res.PeakUsers != 3 || len(res.ScaleChanges) != 1 || res.ScaleChanges[0] != ch {
		t.Errorf("result: peak %d users, changes %+v", res.PeakUsers, res.ScaleChanges)
	}
	// The plan as recorded reads back, executor and all (report, merge).
	if back, err := scenariofile.ReadRecorded(res.Plan); err != nil || back.Scenarios[0].Executor != "externally-controlled" || back.Scenarios[0].MaxVUs != 4 {
		t.Errorf("recorded plan: %v %+v", err, back)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.LoadFile))
	if err != nil {
		t.Fatal(err)
	}
	var logged []rundir.ScaleChange
	var last int64 // the most users a line saw
	for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
		var l rundir.LoadPoint
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		logged = append(logged, l.Scale...)
		last = max(last, l.ActiveUsers)
	}
	if len(logged) != 1 || !logged[0].Time.Equal(ch.Time) || last != 3 {
		t.Errorf("load.jsonl: changes %+v, most users in a line %d", logged, last)
	}
}
