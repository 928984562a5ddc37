// Package threshold is the scenario language's vocabulary for pass/fail
// criteria, as k6 has it: the metrics a threshold can name (mcp_req_duration,
// checks, generator_lag, ...) with their types and the tags they can be
// filtered by, the metric key's syntax (name{tag:value,...}), and the
// expressions (p(95)<500, rate<0.01) with how one judges an observed value.
//
// It stands apart from package plan because none of it needs a plan: the
// engine, the capacity search and the faults timeline use the names and
// expressions on their own. What a tag's value must name in one plan (its
// scenarios, its methods) stays plan's, in plan.Compile.
package threshold
