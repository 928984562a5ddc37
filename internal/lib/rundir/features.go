package rundir

import "maps"

// FeatureStats sums up what a run's users did with MCP 2026-07-28's
// features beyond plain requests, and the cancellation notices of the 2025
// era (summary.json's load.features; absent
// when they did nothing of the kind).
type FeatureStats struct {
	// CacheHits counts, by method (tools/list, prompts/list,
	// resources/list, resources/read), the steps a user served from its
	// cache because the last result's ttlMs had not passed: no request
	// was sent, and none is counted in Requests.
	CacheHits map[string]int64 `json:"cache_hits,omitempty"`
	// InputRoundTrips counts the extra round trips that answered
	// input_required results (a request sent again with inputResponses);
	// they are not counted in Requests.
	InputRoundTrips int64 `json:"input_round_trips,omitempty"`
	// Tasks sums up the tool calls run as tasks.
	Tasks *TaskStats `json:"tasks,omitempty"`
	// Listen sums up the users' notification streams.
	Listen *ListenStats `json:"listen,omitempty"`
	// CancelNotices counts the notifications/cancelled the users sent in
	// the 2025 era for requests they gave up on (2026-07-28 sends none:
	// closing the stream is the cancellation).
	CancelNotices *CancelNoticeStats `json:"cancel_notices,omitempty"`
}

// CancelNoticeStats counts cancellation notices: one for each request a
// 2025-era user gave up on (its abortAfter delay, the request timeout,
// the run's end) other than initialize.
type CancelNoticeStats struct {
	// Sent: POSTed and answered; Refused: those the server answered with
	// an error status (counted, never a failure of the step); Failed: not
	// delivered within the notice's bound (no connection, no answer).
	Sent    int64 `json:"sent"`
	Refused int64 `json:"refused"`
	Failed  int64 `json:"failed"`
}

// TaskStats counts tasks (the Tasks extension) by how they ended. Their
// polls are the tasks/get requests, in Requests and in Latency; the
// tools/call's own latency is the task's, end to end.
type TaskStats struct {
	Created   int64 `json:"created"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	// Cancelled: by the server; GivenUp: cancelled by the step
	// (cancelAfter), past its task timeout, or left when a poll failed
	// (the step failed with it).
	Cancelled int64 `json:"cancelled"`
	GivenUp   int64 `json:"given_up"`
}

// ListenStats counts notification streams (subscriptions/listen, or the
// 2025 GET stream) and what arrived on them.
type ListenStats struct {
	// Streams opened, and Resumed: reopened with Last-Event-ID.
	Streams int64 `json:"streams"`
	Resumed int64 `json:"resumed"`
	// Unsupported counts users whose server offers no stream.
	Unsupported int64 `json:"unsupported"`
	// Events counts the notifications by method.
	Events map[string]int64 `json:"events,omitempty"`
}

// Add adds o into f (for sums over scenarios and shards); nil adds
// nothing.
func (f *FeatureStats) Add(o *FeatureStats) {
	if o == nil {
		return
	}
	addCounts(&f.CacheHits, o.CacheHits)
	f.InputRoundTrips += o.InputRoundTrips
	if t := o.Tasks; t != nil {
		if f.Tasks == nil {
			f.Tasks = &TaskStats{}
		}
		f.Tasks.Created += t.Created
		f.Tasks.Completed += t.Completed
		f.Tasks.Failed += t.Failed
		f.Tasks.Cancelled += t.Cancelled
		f.Tasks.GivenUp += t.GivenUp
	}
	if l := o.Listen; l != nil {
		if f.Listen == nil {
			f.Listen = &ListenStats{}
		}
		f.Listen.Streams += l.Streams
		f.Listen.Resumed += l.Resumed
		f.Listen.Unsupported += l.Unsupported
		addCounts(&f.Listen.Events, l.Events)
	}
	if c := o.CancelNotices; c != nil {
		if f.CancelNotices == nil {
			f.CancelNotices = &CancelNoticeStats{}
		}
		f.CancelNotices.Sent += c.Sent
		f.CancelNotices.Refused += c.Refused
		f.CancelNotices.Failed += c.Failed
	}
}

// addCounts adds src's counts into *dst, making it when src has any.
func addCounts(dst *map[string]int64, src map[string]int64) {
	for k, v := range src {
		if *dst == nil {
			*dst = map[string]int64{}
		}
		(*dst)[k] += v
	}
}

// Empty reports whether f counts nothing (nil too).
func (f *FeatureStats) Empty() bool {
	return f == nil || len(f.CacheHits) == 0 && f.InputRoundTrips == 0 && f.Tasks == nil && f.Listen == nil && f.CancelNotices == nil
}

// Clone returns a copy of f sharing nothing with it.
func (f *FeatureStats) Clone() *FeatureStats {
	if f == nil {
		return nil
	}
	c := &FeatureStats{CacheHits: maps.Clone(f.CacheHits), InputRoundTrips: f.InputRoundTrips}
	if f.Tasks != nil {
		t := *f.Tasks
		c.Tasks = &t
	}
	if f.Listen != nil {
		l := *f.Listen
		l.Events = maps.Clone(f.Listen.Events)
		c.Listen = &l
	}
	if f.CancelNotices != nil {
		n := *f.CancelNotices
		c.CancelNotices = &n
	}
	return c
}
