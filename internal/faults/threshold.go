package faults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RecoveryThreshold is a threshold on the faults' recovery times, as a
// profile's recovery section spells it: "max<10", "avg<=2.5" (seconds).
type RecoveryThreshold struct {
	Agg   string // max, min, avg
	Op    string // <, <=, >, >=
	Value float64
}

// ParseRecoveryThreshold parses AGG OP NUMBER.
func ParseRecoveryThreshold(s string) (RecoveryThreshold, error) {
	t := strings.ReplaceAll(s, " ", "")
	for _, agg := range []string{"max", "min", "avg"} {
		rest, ok := strings.CutPrefix(t, agg)
		if !ok {
			continue
		}
		for _, op := range []string{"<=", ">=", "<", ">"} {
			num, ok := strings.CutPrefix(rest, op)
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 {
				return RecoveryThreshold{}, fmt.Errorf("%q: want a number of seconds after %s", s, op)
			}
			return RecoveryThreshold{agg, op, v}, nil
		}
	}
	return RecoveryThreshold{}, fmt.Errorf("%q: want max, min or avg, then <, <=, > or >=, then seconds (max<10)", s)
}

// Observe aggregates vals (not empty).
func (t RecoveryThreshold) Observe(vals []float64) float64 {
	switch t.Agg {
	case "min":
		return slices.Min(vals)
	case "avg":
		var sum float64
		for _, v := range vals {
			sum += v
		}
		return sum / float64(len(vals))
	}
	return slices.Max(vals)
}

// Holds reports whether observed meets the threshold.
func (t RecoveryThreshold) Holds(observed float64) bool {
	switch t.Op {
	case "<":
		return observed < t.Value
	case "<=":
		return observed <= t.Value
	case ">":
		return observed > t.Value
	}
	return observed >= t.Value
}
