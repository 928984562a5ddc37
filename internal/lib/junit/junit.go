// Package junit writes JUnit XML, as Jenkins, GitLab, GitHub's test
// reporters and most CI systems read it: a document of suites of test
// cases, each passed, failed or skipped. Output is deterministic (no
// timestamps, no durations), so reports can be golden-tested.
//
//	s := junit.Suite{Name: "leak checks"}
//	s.Add(junit.Case{Name: "no session stuck", Classname: "leakbench.after"})
//	err := junit.Write(w, "leakbench sign-off", s)
//
// Hand-written: the format is a dozen XML elements, and no maintained Go
// module for writing it is among those this project can fetch.
package junit

import (
	"encoding/xml"
	"io"
)

// Document is the <testsuites> root.
type Document struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one <testsuite>; Add keeps its counts.
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Cases    []Case `xml:"testcase"`
}

// Case is one <testcase>: passed unless it has a Failure or is Skipped.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Failure   *Message `xml:"failure,omitempty"`
	Skipped   *Message `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Message is a failure's or a skip's message, type and text.
type Message struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Add appends c to the suite and counts it.
func (s *Suite) Add(c Case) {
	s.Tests++
	if c.Failure != nil {
		s.Failures++
	}
	if c.Skipped != nil {
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

// Write writes a document named name holding the suites that have cases.
func Write(w io.Writer, name string, suites ...Suite) error {
	doc := Document{Name: name}
	for _, s := range suites {
		if s.Tests == 0 {
			continue
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
