package junit

import (
	"bytes"
	"encoding/xml"
	"testing"
)

func TestWriteCountsAndSkipsEmptySuites(t *testing.T) {
	var a Suite
	a.Name = "checks"
	a.Add(Case{Name: "ok", Classname: "c"})
	a.Add(Case{Name: "bad", Classname: "c", Failure: &Message{Message: "m", Type: "T", Text: "x < y & z"}})
	a.Add(Case{Name: "later", Classname: "c", Skipped: &Message{Message: "not measured"}})
	var buf bytes.Buffer
	if err := Write(&buf, "doc", a, Suite{Name: "empty"}); err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, buf.Bytes())
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Skipped != 1 || len(doc.Suites) != 1 {
		t.Fatalf("document counts tests=%d failures=%d skipped=%d suites=%d; want 3, 1, 1, 1 (the empty suite left out)", doc.Tests, doc.Failures, doc.Skipped, len(doc.Suites))
	}
	if got := doc.Suites[0].Cases[1].Failure.Text; got != "x < y & z" {
		t.Errorf("failure text %q did not survive escaping", got)
	}
}
