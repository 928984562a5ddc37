package reports

import (
	"os"
	"testing"

	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// TestCapacitySchemaDocumented: every field of a capacity search's
// summary.json is listed in SCHEMA.md by its JSON path.
func TestCapacitySchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range undocumented(string(doc), capreport.Summary{}) {
		t.Errorf("SCHEMA.md does not document `%s`", p)
	}
}
