package rundir

// The files and folders of an output directory. A run directory holds the
// first group; a sign-off's output also the comparison's files and one run
// directory per variant (before/, after/); a probe's output
// (leakbench probe) the probe's own files.
const (
	// ConfigFile is the run's resolved configuration ([Config]), written
	// first; it holds no secret.
	ConfigFile = "config.json"
	// SamplesFile and EpisodesFile are the probe's records ([Sample],
	// [Episode]), one JSON object a line, appended as the run goes.
	SamplesFile  = "samples.jsonl"
	EpisodesFile = "episodes.jsonl"
	// LoadFile is the engine's per-second time series ([LoadPoint]);
	// LoadHistogramsFile the latency histograms of its intervals, in the
	// HdrHistogram log format (tags all and http), from which leakbench
	// merge computes a merged second's percentiles.
	LoadFile           = "load.jsonl"
	LoadHistogramsFile = "load.hlog"
	// RequestsFile is the engine's request index ([Request]): one line per
	// request, with the trace id it carried.
	RequestsFile = "requests.jsonl"
	// HistogramsFile holds the engine's latency histograms in the
	// HdrHistogram log format, one per series; SeriesFile its counters
	// ([SeriesState]): what leakbench merge merges shards from.
	HistogramsFile = "histograms.hlog"
	SeriesFile     = "series.json"
	// SummaryFile is the run's summary ([Summary]), written when it ends.
	SummaryFile = "summary.json"
	// ProbeSummaryFile is leakbench probe's summary ([ProbeSummary]).
	ProbeSummaryFile = "probe-summary.json"
	// ReportFile, HTMLFile and JUnitFile are the rendered reports;
	// CompareFile is a comparison's ([Comparison] in package reports).
	ReportFile  = "report.md"
	HTMLFile    = "report.html"
	JUnitFile   = "junit.xml"
	CompareFile = "compare.json"
	// BaselineReportFile, BaselineSummaryFile and BaselineJUnitFile are a
	// sign-off's comparison with its baseline (--baseline, package
	// history).
	BaselineReportFile  = "baseline.md"
	BaselineSummaryFile = "baseline.json"
	BaselineJUnitFile   = "baseline-junit.xml"
	// TrendHTMLFile and TrendMarkdownFile are leakbench trend's pages
	// (package trend), its plots in PlotsDir.
	TrendHTMLFile     = "trend.html"
	TrendMarkdownFile = "trend.md"
	// PlotsDir holds the plots (PNG and SVG); LogsDir the servers' logs.
	PlotsDir = "plots"
	LogsDir  = "logs"
)
