// Package sqlcomment reads the sqlcommenter comment a service appends to
// its SQL statements, as pg_stat_activity shows it, for the trace context
// and the request it names. Services that use sqlcommenter (Google's
// specification; OpenTelemetry's and most ORMs' SQL instrumentations)
// append a comment to their statements naming the request behind them:
//
//	SELECT … /*application='mcp-gateway',route='tools%2Fcall',traceparent='00-4bf9…-00f0…-01'*/
//
// keys sorted, values URL-encoded and then single quotes escaped with a
// backslash; the comment stands at the end of the statement, before a
// final semicolon if there is one. pg_stat_activity.query shows it, cut
// at track_activity_query_size like the rest. The probe reads it from any
// service: an episode then carries the trace id and span id of the W3C
// traceparent, and every key/value, decoded, with values redacted.
//
// A comment the probe cannot use — unterminated (the server cut the text
// inside it), a value without its closing quote, a bad escape or percent
// encoding, a traceparent not of the W3C form (00-, 32 lowercase hex, -,
// 16 lowercase hex, -, 2 lowercase hex; ids not all zero) — is ignored
// and counted (Summary.MalformedComments), never an error. A trailing
// comment that is not of the key='value' form is a plain comment: not
// sqlcommenter, not counted.
//
// It is a package apart from probes because it is a parser of text that
// other programs write, with a format of its own and a fuzz test of its
// own, and it needs nothing of the sampling: the probes tracker only
// copies what a Reader returns into the episode.
//
//	var r sqlcomment.Reader
//	c, base, st := r.Read(query)
//	switch st {
//	case sqlcomment.OK:
//		fmt.Println(c.TraceID, c.SpanID, c.Pairs["route"], base)
//	case sqlcomment.Malformed:
//		malformed++
//	}
package sqlcomment
