package pyservice

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Checkout is one line of the ground-truth log: a connection checked out
// of the service's pool, and the request it was checked out for.
type Checkout struct {
	// Pid is the PostgreSQL backend's pid (0 if the driver could not
	// tell: a broken connection).
	Pid int `json:"pid"`
	// CheckedOut and CheckedIn are when the connection left the pool and
	// came back (after the pool's ROLLBACK on return). CheckedIn is zero
	// when it was still out as the service stopped (OpenAtExit).
	CheckedOut time.Time `json:"checkout"`
	CheckedIn  time.Time `json:"checkin"`
	OpenAtExit bool      `json:"open_at_exit,omitempty"`
	// Variant is the service's variant.
	Variant string `json:"variant"`
	// Request is the request the checkout served; nil for a checkout
	// outside any request.
	Request *Request `json:"request"`
}

// Held is how long the connection was out of the pool (0 if still out).
func (c Checkout) Held() time.Duration {
	if c.CheckedIn.IsZero() {
		return 0
	}
	return c.CheckedIn.Sub(c.CheckedOut)
}

// Request is an HTTP request as the ground-truth log names it.
type Request struct {
	// ID is the service's own id of the request (req-000001, ...), unique
	// within one run of the service.
	ID         string `json:"id"`
	HTTPMethod string `json:"http_method"`
	Path       string `json:"path"`
	// Method is the JSON-RPC method, Tool the tool of a tools/call
	// (empty when none or not JSON-RPC).
	Method string `json:"method"`
	Tool   string `json:"tool"`
	// RPCID is the JSON-RPC id, as sent.
	RPCID json.RawMessage `json:"rpc_id"`
	// Session is the Mcp-Session-Id the request carried (or that its
	// initialize was given).
	Session string `json:"session"`
	// User is the bearer token's user (its email); empty when the request
	// was not authenticated (no token, an unknown one, or the lookup
	// failed).
	User string `json:"user"`
	// Traceparent is the W3C traceparent header (or params._meta's) the
	// client sent, if any.
	Traceparent string `json:"traceparent"`
	// Start is when the service got the request, End when the last byte
	// of its answer was handed to the server.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Status is the HTTP status answered; Error the JSON-RPC error or the
	// tool's error, if any.
	Status int    `json:"status"`
	Error  string `json:"error"`
}

// ReadGroundTruth parses a ground-truth log. A malformed line is an error
// naming it (the service writes and flushes whole lines: one is broken
// only if the service was killed while writing it).
func ReadGroundTruth(path string) ([]Checkout, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Checkout
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c Checkout
		if err := json.Unmarshal(line, &c); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}
