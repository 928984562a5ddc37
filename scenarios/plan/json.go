package scenarios

import "fmt"

// UnmarshalJSON reads a plan written by MarshalJSON (the scenario file's
// shape: JSON being YAML, the scenario parser reads it), so that a run
// directory's summary.json round-trips.
func (p *Plan) UnmarshalJSON(b []byte) error {
	q, err := ParsePlan(b, "plan (JSON)")
	if err != nil {
		return fmt.Errorf("read plan: %w", err)
	}
	*p = *q
	return nil
}
