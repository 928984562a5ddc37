package reports

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// AddCapacity adds the capacity search cs (written in
// dir/capreport.SignoffDir) to the sign-off in dir: compare.json's
// capacity, and a Capacity section in report.md and report.html, which are
// written again; the section is appended to $GITHUB_STEP_SUMMARY, which
// already has the rest.
func (c *Comparison) AddCapacity(dir string, cs *capreport.Summary) error {
	c.Capacity = capreport.NewSignoff(cs, capreport.SignoffDir)
	if err := writeJSON(filepath.Join(dir, rundir.CompareFile), c); err != nil {
		return fmt.Errorf("add capacity to %s: %w", rundir.CompareFile, err)
	}
	if err := rundir.WriteFileFunc(filepath.Join(dir, rundir.ReportFile), c.WriteMarkdown); err != nil {
		return fmt.Errorf("add capacity to %s: %w", rundir.ReportFile, err)
	}
	if err := rundir.WriteFileFunc(filepath.Join(dir, rundir.HTMLFile), c.WriteHTML); err != nil {
		return fmt.Errorf("add capacity to %s: %w", rundir.HTMLFile, err)
	}
	var md strings.Builder
	c.Capacity.WriteMarkdown(&md)
	return appendStepSummary([]byte(md.String()))
}
