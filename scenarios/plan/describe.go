package plan

import (
	"fmt"
	"strings"
	"time"
)

// Describe says in one line what load p plays: each scenario with its
// executor, users or rate, stages and durations, then the request
// timeout. Reports and logs print it as the run's scenario.
//
//	agents: ramping-vus, users 0→3000 over 30s, 3000 for 2m30s; request timeout 30s
func (p *Plan) Describe() string {
	parts := make([]string, 0, len(p.Scenarios)+1)
	for i := range p.Scenarios {
		parts = append(parts, p.Scenarios[i].describe())
	}
	parts = append(parts, "request timeout "+p.Timeout.String())
	return strings.Join(parts, "; ")
}

func (s *Scenario) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, ", s.Name, s.Executor)
	switch s.Executor {
	case ExecConstantVUs:
		fmt.Fprintf(&b, "%d users for %s", s.VUs, s.Duration)
	case ExecPerVUIterations:
		fmt.Fprintf(&b, "%d users × %d iterations (at most %s)", s.VUs, s.Iterations, s.MaxDuration)
	case ExecRampingVUs:
		b.WriteString("users ")
		b.WriteString(describeStages(s.StartVUs, s.Stages))
	case ExecConstantArrivalRate:
		fmt.Fprintf(&b, "%d iterations %s for %s, up to %d users", s.Rate, per(s.TimeUnit), s.Duration, max(s.MaxVUs, s.PreAllocatedVUs))
	case ExecExternallyControlled:
		fmt.Fprintf(&b, "%d users at the start, up to %d as told, for %s", s.VUs, s.MaxVUs, s.Duration)
	case ExecRampingArrivalRate:
		fmt.Fprintf(&b, "iterations %s ", per(s.TimeUnit))
		b.WriteString(describeStages(s.StartRate, s.Stages))
		fmt.Fprintf(&b, ", up to %d users", max(s.MaxVUs, s.PreAllocatedVUs))
	}
	if s.StartTime > 0 {
		fmt.Fprintf(&b, ", from %s", s.StartTime)
	}
	if s.Timeout > 0 {
		fmt.Fprintf(&b, ", request timeout %s", s.Timeout)
	}
	return b.String()
}

// describeStages writes ramping stages as "0→60 over 2s, 60 for 18s".
func describeStages(start int, stages []Stage) string {
	parts := make([]string, 0, len(stages))
	cur := start
	for _, st := range stages {
		if st.Target == cur {
			parts = append(parts, fmt.Sprintf("%d for %s", st.Target, st.Duration))
		} else {
			parts = append(parts, fmt.Sprintf("%d→%d over %s", cur, st.Target, st.Duration))
		}
		cur = st.Target
	}
	return strings.Join(parts, ", ")
}

func per(unit Duration) string {
	if unit.D() == time.Second {
		return "per second"
	}
	return "per " + unit.String()
}
