package dashboard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Event is one event of the page's stream (GET /events), decoded as a
// client reads it.
type Event struct {
	// Name is the event's name: history (the points so far and the
	// panel), tick (the new point and the panel), state (the panel
	// alone) or done (the last panel; the stream ends).
	Name string
	// Points are the points it carries: a history's all, a tick's one.
	Points []Point
	// State is the panel it carries, if any.
	State *State
}

// ReadEvents reads the page's stream from r and calls fn with each event
// until fn returns false, a done event was handed over, or the stream
// ends. An event whose data does not decode is an error naming it. The
// tests of the commands that serve the page read it through this, as a
// browser would.
func ReadEvents(r io.Reader, fn func(Event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20) // a late joiner's history holds every point so far
	name := ""
	for sc.Scan() {
		line := sc.Bytes()
		if n, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
			name = string(n)
			continue
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		ev, err := decodeEvent(name, data)
		if err != nil {
			return err
		}
		if ev.Name == "" { // an event a client need not read (a comment, a ping)
			continue
		}
		if !fn(ev) || ev.Name == "done" {
			return nil
		}
	}
	return sc.Err()
}

// decodeEvent decodes the data of the event named name; an event of
// another name is returned empty.
func decodeEvent(name string, data []byte) (Event, error) {
	ev := Event{Name: name}
	switch name {
	case "history", "tick":
		var m struct {
			Points []Point `json:"points"`
			Point  *Point  `json:"point"`
			State  *State  `json:"state"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return ev, fmt.Errorf("the page's %s event: %w", name, err)
		}
		ev.Points, ev.State = m.Points, m.State
		if m.Point != nil {
			ev.Points = append(ev.Points, *m.Point)
		}
	case "state", "done":
		var st State
		if err := json.Unmarshal(data, &st); err != nil {
			return ev, fmt.Errorf("the page's %s event: %w", name, err)
		}
		ev.State = &st
	default:
		return Event{}, nil
	}
	return ev, nil
}
