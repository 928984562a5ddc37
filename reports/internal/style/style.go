// Package style holds the style sheet the HTML reports share — the run's,
// the sign-off's and the capacity search's pages — so that the pages
// cannot drift apart.
package style

import (
	_ "embed"
	"html/template"
)

//go:embed report.css
var css string

// CSS is the reports' style sheet, for a page's <style> element.
func CSS() template.CSS { return template.CSS(css) } // #nosec: our own file
