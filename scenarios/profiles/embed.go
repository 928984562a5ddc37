// Package profiles is the profile format and leakbench's built-in
// profiles. A profile is a scenario file (see
// scenarios/examples/annotated.yaml) with top-level sections of its own —
// stack, probe, signoff, faults, recovery, capacity and soak — that say what
// to start, how to watch it, which gateway variants to compare and how the
// other commands use it. Parse, Load and Lookup read one into a Profile:
// the scenario by package scenariofile, the profile's sections by the same
// rules (each key in one spelling, an older spelling read with a warning
// naming the key; every error naming its line). The built-in ones are
// embedded; copy one, edit it, and pass it with `leakbench signoff
// --scenario FILE`. The package links no container stack and no gateway
// (internal/testing/layers), so that every format reader can use it.
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
