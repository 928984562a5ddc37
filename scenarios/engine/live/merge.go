package live

import (
	"encoding/json"
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Snapshots of several processes playing one plan (leakbench run
// --workers): each worker sends its own (Encode), and the parent serves
// them merged (Merge) at one /metrics.

// wireSeries is a Series as it travels: its histogram HdrHistogram's
// compressed encoding.
type wireSeries struct {
	Series
	Hist string `json:"hist,omitempty"`
}

type wireSnapshot struct {
	Series    []wireSeries
	Scenarios []Scenario
	Generator *Generator
}

// Encode writes s as one line of JSON, histograms compressed.
func Encode(s Snapshot) ([]byte, error) {
	w := wireSnapshot{Scenarios: s.Scenarios, Generator: s.Generator}
	for _, se := range s.Series {
		ws := wireSeries{Series: se}
		ws.Series.Hist = nil
		if se.Hist != nil {
			raw, err := se.Hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				return nil, fmt.Errorf("encode a live histogram: %w", err)
			}
			ws.Hist = string(raw)
		}
		w.Series = append(w.Series, ws)
	}
	return json.Marshal(w)
}

// Decode reads what Encode wrote.
func Decode(raw []byte) (Snapshot, error) {
	var w wireSnapshot
	if err := json.Unmarshal(raw, &w); err != nil {
		return Snapshot{}, fmt.Errorf("decode a live snapshot: %w", err)
	}
	s := Snapshot{Scenarios: w.Scenarios, Generator: w.Generator}
	for _, ws := range w.Series {
		se := ws.Series
		if ws.Hist != "" {
			h, err := hdrhistogram.Decode([]byte(ws.Hist))
			if err != nil {
				return Snapshot{}, fmt.Errorf("decode a live histogram: %w", err)
			}
			se.Hist = h
		}
		s.Series = append(s.Series, se)
	}
	return s, nil
}

type seriesKey struct {
	scenario     string
	kind         SeriesKind
	method, name string
	status       int
}

// Merge adds snapshots of the slices of one plan up into one: counters
// and users summed, histograms merged (percentiles exact). VUsMax is the
// sum of the slices' peaks (an upper bound, as the merge of shards says);
// of the generators, cores add up and lateness is the latest slice's
// (an upper bound). Features are left out: the run's summary has them.
func Merge(snaps []Snapshot) Snapshot {
	var out Snapshot
	series := map[seriesKey]int{}
	scens := map[string]int{}
	for _, s := range snaps {
		for _, se := range s.Series {
			k := seriesKey{se.Scenario, se.Kind, se.Method, se.Name, se.Status}
			i, ok := series[k]
			if !ok {
				i = len(out.Series)
				series[k] = i
				out.Series = append(out.Series, Series{Scenario: se.Scenario, Kind: se.Kind, Method: se.Method, Name: se.Name, Status: se.Status})
			}
			m := &out.Series[i]
			m.Requests += se.Requests
			m.Aborted += se.Aborted
			for kind, n := range se.Failures {
				if m.Failures == nil {
					m.Failures = map[string]int64{}
				}
				m.Failures[kind] += n
			}
			switch {
			case se.Hist == nil:
			case m.Hist == nil:
				m.Hist = hdrhistogram.Import(se.Hist.Export())
			default:
				m.Hist.Merge(se.Hist)
			}
		}
		for _, sc := range s.Scenarios {
			i, ok := scens[sc.Name]
			if !ok {
				i = len(out.Scenarios)
				scens[sc.Name] = i
				out.Scenarios = append(out.Scenarios, Scenario{Name: sc.Name})
			}
			m := &out.Scenarios[i]
			m.Iterations += sc.Iterations
			m.Dropped += sc.Dropped
			m.VUs += sc.VUs
			m.VUsMax += sc.VUsMax
		}
		if g := s.Generator; g != nil {
			if out.Generator == nil {
				out.Generator = &Generator{MachineKnown: true}
			}
			m := out.Generator
			m.CPUs += g.CPUs
			m.Cores += g.Cores
			m.MachineKnown = m.MachineKnown && g.MachineKnown
			m.MachineBusy = max(m.MachineBusy, g.MachineBusy)
			m.LateSamples += g.LateSamples
			m.LateP50, m.LateP99, m.LateMax = max(m.LateP50, g.LateP50), max(m.LateP99, g.LateP99), max(m.LateMax, g.LateMax)
		}
	}
	return out
}
