// Package profiles holds leakbench's built-in sign-off profiles: scenario
// files (see scenarios/examples/annotated.yaml) with three more top-level
// sections — stack, probe and signoff — that say what to start, how to
// watch it, and which gateway variants to compare. The whole file is read
// by one set of rules (package plan): keys in any spelling (max_connections
// = maxConnections = max-connections), every error naming its line. Copy
// one, edit it, and pass it with `leakbench signoff --scenario FILE`.
package profiles

import (
	"embed"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the built-in profiles.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Read returns a built-in profile's file; ok is false for an unknown name.
func Read(name string) (data []byte, ok bool) {
	data, err := files.ReadFile(name + ".yaml")
	return data, err == nil
}
