package probes

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// parseApps reads the activity query's per-application counts: a JSON
// array of [name, by address, active, idle, idle in transaction, aborted,
// other, latest state_change] rows (activitySQL), written by the server
// itself, so a malformed one is an error rather than something to guess
// around.
func parseApps(text string) ([]rundir.AppConns, error) {
	if text == "" || text == "[]" {
		return nil, nil
	}
	var rows [][]json.RawMessage
	if err := json.Unmarshal([]byte(text), &rows); err != nil {
		return nil, err
	}
	out := make([]rundir.AppConns, 0, len(rows))
	for _, r := range rows {
		if len(r) != 8 {
			return nil, fmt.Errorf("a row of %d fields, want 8", len(r))
		}
		var a rundir.AppConns
		var last *string
		for i, dst := range []any{&a.Name, &a.ByAddress, &a.Active, &a.Idle, &a.IdleInTx, &a.IdleInTxAborted, &a.Other, &last} {
			if err := json.Unmarshal(r[i], dst); err != nil {
				return nil, fmt.Errorf("field %d: %w", i, err)
			}
		}
		if last != nil {
			t, err := time.Parse(time.RFC3339Nano, *last)
			if err != nil {
				return nil, fmt.Errorf("state_change: %w", err)
			}
			a.LastStateChange = t.UTC()
		}
		out = append(out, a)
	}
	return out, nil
}
