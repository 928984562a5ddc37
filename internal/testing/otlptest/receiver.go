// Package otlptest is an OTLP/HTTP receiver for tests: it decodes what an
// exporter sends with the official protobuf types, as a collector's OTLP
// receiver does, and keeps the spans and metrics for the test to read.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is an OTLP/HTTP receiver on 127.0.0.1 that decodes what it gets
// with the official protobuf types, as a collector's OTLP receiver does.
type Receiver struct {
	URL string

	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []*metricpb.Metric
	bad     []string // requests it could not decode
}

// Start starts a receiver, closed when the test ends; a request it could
// not decode fails the test then.
func Start(t testing.TB) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{URL: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", handle(r, &coltracepb.ExportTraceServiceResponse{},
		func(in *coltracepb.ExportTraceServiceRequest) {
			for _, rs := range in.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					r.spans = append(r.spans, ss.Spans...)
				}
			}
		}))
	mux.HandleFunc("POST /v1/metrics", handle(r, &colmetricpb.ExportMetricsServiceResponse{},
		func(in *colmetricpb.ExportMetricsServiceRequest) {
			for _, rm := range in.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					r.metrics = append(r.metrics, sm.Metrics...)
				}
			}
		}))
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() {
		_ = srv.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, b := range r.bad {
			t.Errorf("receiver: %s", b)
		}
	})
	return r
}

// handle is one OTLP export endpoint: it decodes the request into a new
// In, hands it to keep under the receiver's lock and answers with the
// empty response; a request it cannot decode is kept as a failure.
func handle[In any, PIn interface {
	*In
	proto.Message
}](r *Receiver, response proto.Message, keep func(PIn)) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		in := PIn(new(In))
		if !r.decode(w, req, in) {
			return
		}
		r.mu.Lock()
		keep(in)
		r.mu.Unlock()
		reply(w, response)
	}
}

func (r *Receiver) decode(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			r.fail(w, "gzip: "+err.Error())
			return false
		}
		body = zr
	}
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
		r.fail(w, "decode "+req.URL.Path+" ("+req.Header.Get("Content-Type")+"): "+errString(err))
		return false
	}
	return true
}

func errString(err error) string {
	if err == nil {
		return "not protobuf"
	}
	return err.Error()
}

func (r *Receiver) fail(w http.ResponseWriter, msg string) {
	r.mu.Lock()
	r.bad = append(r.bad, msg)
	r.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

func reply(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// Spans returns what arrived so far.
func (r *Receiver) Spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// Metrics returns the metrics that arrived, by name (the last of each).
func (r *Receiver) Metrics() map[string]*metricpb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*metricpb.Metric{}
	for _, m := range r.metrics {
		out[m.Name] = m
	}
	return out
}

// Attrs are a span's (or data point's) attributes by key, as strings of
// their values.
func Attrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	out := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		out[kv.Key] = kv.Value
	}
	return out
}

// HexID is a trace or span id in hex, as traceparent writes it.
func HexID(b []byte) string { return hex.EncodeToString(b) }
