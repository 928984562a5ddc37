package otelexport

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
)

// Config configures the export.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP base URL (--otlp-endpoint),
	// e.g. http://127.0.0.1:4318: traces go to /v1/traces and metrics to
	// /v1/metrics under it, as with OTEL_EXPORTER_OTLP_ENDPOINT. Set, it
	// wins over the OTEL_EXPORTER_OTLP_*ENDPOINT variables; empty, they
	// decide, and without them nothing is exported.
	Endpoint string
	// SampleRatio is the share of requests exported as spans, decided by
	// trace id (the SDK's TraceIDRatioBased): 1 all of them, 0 none
	// (--otlp-sample; its default is 1). Episodes are always exported.
	SampleRatio float64
	// MaxQueue bounds the spans waiting for export (0: DefaultMaxQueue);
	// a span ended while it is full is dropped and counted.
	MaxQueue int
	// FlushTimeout bounds each wait for the queue to drain after a run
	// (0: DefaultFlushTimeout).
	FlushTimeout time.Duration
	// Version is leakbench's version: the resource's service.version.
	Version string
	// Log gets the first export error as it happens (the SDK's own
	// handler would print every failed batch); nil discards it.
	// RunWritten's line says what was dropped.
	Log io.Writer
}

// Defaults.
const (
	DefaultMaxQueue     = 4096
	DefaultFlushTimeout = 10 * time.Second
)

// The standard variables that name an endpoint.
const (
	envEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envSDKDisabled     = "OTEL_SDK_DISABLED"
)

// signals says which signals are exported: traces and metrics each need
// the flag, the shared variable, or their own.
type signals struct{ traces, metrics bool }

func (c Config) signals() signals {
	if c.Endpoint != "" {
		return signals{true, true}
	}
	if b, _ := strconv.ParseBool(os.Getenv(envSDKDisabled)); b {
		return signals{}
	}
	all := os.Getenv(envEndpoint) != ""
	return signals{traces: all || os.Getenv(envTracesEndpoint) != "", metrics: all || os.Getenv(envMetricsEndpoint) != ""}
}

// Enabled says whether anything is to be exported.
func (c Config) Enabled() bool {
	s := c.signals()
	return s.traces || s.metrics
}

// check validates the flag's URL and the ratio: the SDK would silently keep
// its default endpoint for a URL it cannot parse.
func (c Config) check() error {
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		return fmt.Errorf("--otlp-sample %g: want a ratio from 0 to 1", c.SampleRatio)
	}
	if c.Endpoint == "" {
		return nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--otlp-endpoint %s: want the collector's OTLP/HTTP base URL, e.g. http://127.0.0.1:4318", redact.URL(c.Endpoint))
	}
	return nil
}

// signalURL is the flag's URL for one signal: its base path and the
// signal's (/v1/traces), as the SDK does with OTEL_EXPORTER_OTLP_ENDPOINT.
func signalURL(base, path string) string {
	u, _ := url.Parse(base) // checked
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	return u.String()
}

// tracesEndpoint is where spans go, for the log and the summary
// (credentials masked).
func (c Config) tracesEndpoint() string {
	switch {
	case c.Endpoint != "":
		return redact.URL(signalURL(c.Endpoint, "/v1/traces"))
	case os.Getenv(envTracesEndpoint) != "":
		return redact.URL(os.Getenv(envTracesEndpoint))
	case os.Getenv(envEndpoint) != "":
		return redact.URL(signalURL(os.Getenv(envEndpoint), "/v1/traces"))
	}
	return ""
}
