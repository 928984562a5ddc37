package dashboard

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadEvents: the stream as the server encodes it (event) decodes
// into its points and panels; a ping is skipped; reading stops at done
// and when fn says so; data that does not decode is an error naming the
// event.
func TestReadEvents(t *testing.T) {
	var s bytes.Buffer
	s.Write(event("history", []byte(`{"points":[{"t":1},{"t":2}],"state":{"title":"h"}}`)))
	s.WriteString(": ping\n\n")
	s.Write(event("tick", []byte(`{"point":{"t":3},"state":{"title":"t"}}`)))
	s.Write(event("state", []byte(`{"title":"s"}`)))
	s.Write(event("done", []byte(`{"title":"d"}`)))
	s.Write(event("tick", []byte(`{"point":{"t":4}}`))) // after done: not read
	var names []string
	var points int
	err := ReadEvents(bytes.NewReader(s.Bytes()), func(ev Event) bool {
		names = append(names, ev.Name)
		points += len(ev.Points)
		if ev.State == nil {
			t.Errorf("%s event without its panel", ev.Name)
		}
		return true
	})
	if err != nil || strings.Join(names, ",") != "history,tick,state,done" || points != 3 {
		t.Errorf("events %v with %d points, err %v; want history,tick,state,done with 3", names, points, err)
	}
	n := 0
	if err := ReadEvents(bytes.NewReader(s.Bytes()), func(Event) bool { n++; return false }); err != nil || n != 1 {
		t.Errorf("fn returning false: %d events read, err %v; want 1", n, err)
	}
	bad := event("tick", []byte(`{"point":`))
	if err := ReadEvents(bytes.NewReader(bad), func(Event) bool { return true }); err == nil || !strings.Contains(err.Error(), "tick event") {
		t.Errorf("bad data: %v, want an error naming the tick event", err)
	}
}
