package workers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/leakbench/leakbench/internal/lib/gcheadroom"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/live"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// maxSpec bounds a worker's spec: a plan (at most 1 MiB as a file) and
// its tokens.
const maxSpec = 64 << 20

// Spec is what a worker plays, sent as one JSON line on its standard
// input, never on its command line (ps shows that): it holds the tokens
// and the plan's headers as written.
type Spec struct {
	// Plan is the plan in the scenario file's shape, secrets as written
	// (runner's shard encoding).
	Plan json.RawMessage `json:"plan"`
	// Target is the MCP endpoint; Tokens the users' bearer tokens.
	Target string   `json:"target"`
	Tokens []string `json:"tokens,omitempty"`
	// Segment is the worker's slice ("i/N"); StartAt the workers' common
	// start.
	Segment string    `json:"segment"`
	StartAt time.Time `json:"start_at"`
	// SourceAddrs are the addresses its connections are dialed from.
	SourceAddrs []netip.Addr `json:"source_addrs,omitempty"`
	// RunDir is where it writes its results (load.jsonl every second,
	// series.json and histograms.hlog at the end, for the merge).
	RunDir string `json:"run_dir"`
	// TLS and OAuth are how the target is reached past a plain
	// connection, as the user gave them (reach.go); nil: not used.
	TLS   *TLSSettings   `json:"tls,omitempty"`
	OAuth *OAuthSettings `json:"oauth,omitempty"`
	// Live: write the live snapshot (package live's encoding) every
	// second, one line each, to file descriptor 3, for the parent's
	// /metrics.
	Live bool `json:"live,omitempty"`
}

// liveFD is the worker's descriptor for its live snapshots (the first of
// exec.Cmd.ExtraFiles).
const liveFD = 3

// Serve is a worker process's life (leakbench worker): it reads its Spec
// from in, plays its slice of the plan into Spec.RunDir, and returns when
// the load ends. The end of in (the parent closed it, or died) stops the
// load as Ctrl-C would: users stop, results are written.
func Serve(ctx context.Context, in io.Reader, logw io.Writer) error {
	br := bufio.NewReaderSize(io.LimitReader(in, maxSpec), 64<<10)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("worker: read the spec from standard input: %w", err)
	}
	var sp Spec
	if err := json.Unmarshal(line, &sp); err != nil {
		return fmt.Errorf("worker: decode the spec: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Many waiting users make a large live heap that allocates slowly:
	// GOGC's 100% would let as much again in garbage sit in memory
	// (package gcheadroom).
	go gcheadroom.Run(ctx, gcheadroom.Default())
	go func() {
		// Nothing more is sent: the end of input is the parent's stop.
		_, _ = io.Copy(io.Discard, br)
		cancel()
	}()
	p, err := scenariofile.ReadPlayable(sp.Plan)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	seg, err := plan.ParseSegment(sp.Segment)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	tlsConf, oauth, err := sp.reach()
	if err != nil {
		return err
	}
	var sendLive func(func() live.Snapshot)
	if sp.Live {
		f := os.NewFile(liveFD, "live")
		defer f.Close()
		stop := make(chan struct{})
		defer close(stop)
		sendLive = func(snap func() live.Snapshot) { go sendSnapshots(f, snap, stop) }
	}
	res, err := engine.RunPlan(ctx, p, engine.RunOptions{
		Live:        sendLive,
		Target:      sp.Target,
		Tokens:      sp.Tokens,
		TLS:         tlsConf,
		OAuth:       oauth,
		RunDir:      sp.RunDir,
		Segment:     seg,
		StartAt:     sp.StartAt,
		SourceAddrs: sp.SourceAddrs,
		// The parent prints one line for all workers, from their
		// load.jsonl; a worker's own would interleave.
		Progress: io.Discard,
	})
	if err != nil {
		return fmt.Errorf("worker %s: %s", seg, redact.String(err.Error()))
	}
	// However the load ended (interrupted too), its results are written:
	// the parent merges them and judges.
	fmt.Fprintf(logw, "worker %s: load %s: %d requests, %d failed\n", seg, res.EndReason, res.Requests, res.Failures)
	return nil
}

// sendSnapshots writes the run's live snapshot to w every second until
// stop. A parent that stopped reading costs the worker nothing more than
// failed writes.
func sendSnapshots(w io.Writer, snap func() live.Snapshot, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		raw, err := live.Encode(snap())
		if err != nil {
			continue
		}
		if _, err := w.Write(append(raw, '\n')); err != nil {
			return
		}
	}
}
