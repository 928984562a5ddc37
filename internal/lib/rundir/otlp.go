package rundir

// OTLPExport is summary.json's otlp section: what a run sent to an
// OpenTelemetry collector (--otlp-endpoint or the OTEL_EXPORTER_OTLP_*
// variables); absent when nothing was exported. reports/SCHEMA.md
// describes every field.
type OTLPExport struct {
	// Endpoint is where the spans went, credentials masked.
	Endpoint string `json:"endpoint,omitempty"`
	// SampleRatio is the share of requests exported as spans (by trace id).
	SampleRatio float64 `json:"sample_ratio"`
	// RequestSpans and EpisodeSpans are the spans the run ended: its
	// sampled requests' and its idle-in-transaction episodes'.
	RequestSpans int64 `json:"request_spans"`
	EpisodeSpans int64 `json:"episode_spans"`
	// SpansExported is how many of them the collector accepted;
	// SpansDropped the others, by the time the summary was written:
	// dropped from the exporter's full queue (a slow or absent collector),
	// refused, or still queued when the flush timed out.
	SpansExported int64 `json:"spans_exported"`
	SpansDropped  int64 `json:"spans_dropped"`
	// MetricsExported: the run's key figures reached the collector as
	// OTLP gauges.
	MetricsExported bool `json:"metrics_exported"`
	// Error is the last export error, secrets masked.
	Error string `json:"error,omitempty"`
}
