package scenariofile

// The keys the parser accepts, place by place: the tables it reads with,
// listed for the scenario file's reference (docs/reference/scenario.md),
// whose completeness a test holds to these very tables.

import (
	"reflect"
	"strings"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// The key tables the decoder reads with besides planKeys,
// commonScenarioKeys, plan.ExecutorOptions, stepOptions, requestOptions,
// checkKeys and dataKeys.
var (
	stageKeys       = []string{"duration", "target"}
	thresholdKeys   = []string{"threshold", "abortOnFail", "delayAbortEval"}
	connectionsKeys = []string{plan.ConnectionsShared}
	thinkKeys       = []string{plan.ThinkFixed, plan.ThinkUniform, plan.ThinkExponential}
	chooseKeys      = []string{"weight", "steps"}
	taskKeys        = []string{"cancelAfter", "timeout"}
)

// A KeyGroup is one place in a scenario file and the keys the parser
// accepts there, each in its one spelling. Where is the heading the
// reference gives that place.
type KeyGroup struct {
	Where string
	Keys  []string
}

// Keys lists every key the parser accepts, place by place, the given
// sections' (their Into's yaml tags) after the plan's own. Step names
// are the group "Steps".
func Keys(sections ...Section) []KeyGroup {
	top := append([]string(nil), planKeys...)
	for _, s := range sections {
		top = append(top, s.Key)
	}
	out := []KeyGroup{
		{"Top level", top},
		{"Scenario", commonScenarioKeys},
	}
	for _, e := range plan.Executors {
		out = append(out, KeyGroup{"Executor " + e, plan.ExecutorOptions[e]})
	}
	out = append(out,
		KeyGroup{"Stage", stageKeys},
		KeyGroup{"Data", dataKeys},
		KeyGroup{"Connections", connectionsKeys},
		KeyGroup{"Threshold", thresholdKeys},
		KeyGroup{"Steps", plan.StepKinds},
		KeyGroup{"Think", thinkKeys},
		KeyGroup{"Choose", chooseKeys},
	)
	for _, k := range plan.StepKinds {
		switch k {
		case plan.StepThink, plan.StepChoose:
			continue
		}
		keys := stepOptions[k]
		if keys == nil {
			keys = requestOptions
		}
		out = append(out, KeyGroup{"Step " + k, keys})
	}
	out = append(out, KeyGroup{"Task", taskKeys}, KeyGroup{"Check", checkKeys})
	for _, s := range sections {
		out = append(out, KeyGroup{"Section " + s.Key, sectionKeys(s.Into)})
	}
	return out
}

// sectionKeys lists the keys of a section's struct (or of its list's
// elements), as structInto reads them.
func sectionKeys(into any) []string {
	t := reflect.TypeOf(into)
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out = append(out, name)
	}
	return out
}
