package gateway

import (
	"fmt"
	"slices"
	"strings"
)

// Variant names a leak pattern the gateway reproduces (or the fix).
type Variant string

const (
	// VariantFixed releases every database session on every path.
	VariantFixed Variant = "fixed"
	// VariantCommitInFinally reproduces ContextForge #1885.
	VariantCommitInFinally Variant = "commit-in-finally"
)

// Variants lists every known variant, for help texts and validation.
var Variants = []Variant{VariantFixed, VariantCommitInFinally}

// VariantSet is the set of variants enabled at once.
type VariantSet map[Variant]bool

// ParseVariants parses a comma-separated list of variant names.
func ParseVariants(s string) (VariantSet, error) {
	set := VariantSet{}
	for _, name := range strings.Split(s, ",") {
		v := Variant(strings.TrimSpace(name))
		if v == "" {
			continue
		}
		if !slices.Contains(Variants, v) {
			return nil, fmt.Errorf("unknown gateway variant %q (known: %s)", v, VariantNames())
		}
		set[v] = true
	}
	if len(set) == 0 {
		set[VariantFixed] = true
	}
	if set[VariantFixed] && len(set) > 1 {
		return nil, fmt.Errorf("variant %q cannot be combined with leak variants (%s)", VariantFixed, s)
	}
	return set, nil
}

// VariantNames returns the known variant names, comma-separated.
func VariantNames() string {
	names := make([]string, len(Variants))
	for i, v := range Variants {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// String returns the set's names in a stable order.
func (s VariantSet) String() string {
	var names []string
	for _, v := range Variants {
		if s[v] {
			names = append(names, string(v))
		}
	}
	return strings.Join(names, ",")
}
