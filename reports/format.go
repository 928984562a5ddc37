package reports

import (
	"github.com/leakbench/leakbench/reports/internal/format"
)

// seconds is a duration in seconds as every part of a report writes it.
var seconds = format.Seconds

// mdEscape makes text safe inside a Markdown table cell or inline code.
var mdEscape = format.MDEscape

var truncate = format.Truncate
