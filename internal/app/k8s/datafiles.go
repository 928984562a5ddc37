package k8s

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// A plan's data files travel in a ConfigMap of their own, NAME-data, and
// appear beside the scenario in the pods: the scenario's volume becomes a
// projected one, the scenario's ConfigMap (or Secret) and the data files
// mounted together at ScenarioDir, each data file at the path the scenario
// gives it. So the scenario runs unchanged in the pods, its relative paths
// meaning there what they mean here; a path that leaves the scenario's
// folder (absolute, or through "..") has no place in that volume and is
// refused.

// maxConfigMapBytes is what one ConfigMap may hold: Kubernetes refuses
// one whose data exceed 1 MiB.
const maxConfigMapBytes = 1 << 20

// dataSources are p's data sources: the plan's and each scenario's.
func dataSources(p *plan.Plan) []*plan.DataSource {
	var out []*plan.DataSource
	if p.Data != nil {
		out = append(out, p.Data)
	}
	for _, s := range p.Scenarios {
		if s.Data != nil {
			out = append(out, s.Data)
		}
	}
	return out
}

// ReadDataFiles reads p's data files from this machine, by their paths
// as the scenario writes them (Options.DataFiles); a plan without data
// files gives none.
func ReadDataFiles(p *plan.Plan) (map[string][]byte, error) {
	var files map[string][]byte
	for _, d := range dataSources(p) {
		if _, ok := files[d.File]; ok {
			continue
		}
		raw, err := os.ReadFile(d.Path())
		if err != nil {
			return nil, fmt.Errorf("read the data file %s for the pods: %w", d.File, err)
		}
		if files == nil {
			files = map[string][]byte{}
		}
		files[d.File] = raw
	}
	return files, nil
}

// checkData checks that p's data files can go where the pods find them:
// every one given in o.DataFiles, each at a path inside the scenario's
// folder, and all of them in one ConfigMap.
func (o Options) checkData(p *plan.Plan) []error {
	var errs []error
	for _, d := range dataSources(p) {
		if !filepath.IsLocal(d.File) {
			errs = append(errs, fmt.Errorf("data file %s: the pods find data files beside the scenario, at the path the scenario gives; "+
				"give a path relative to the scenario's folder and inside it (move the file there)", d.File))
		} else if _, ok := o.DataFiles[d.File]; !ok {
			errs = append(errs, fmt.Errorf("data file %s: its content was not given (Options.DataFiles: ReadDataFiles reads them)", d.File))
		}
	}
	size := 0
	for name, raw := range o.DataFiles {
		size += len(name) + len(raw)
	}
	if size > maxConfigMapBytes {
		errs = append(errs, fmt.Errorf("data files of %d bytes: a ConfigMap holds at most %d (1 MiB); "+
			"play a smaller file, or bake the data into an image of your own FROM the leakbench image", size, maxConfigMapBytes))
	}
	return errs
}

// dataConfigMap is the data files' ConfigMap's name.
func (o Options) dataConfigMap() string { return o.Name + "-data" }

// dataKeys are the data files' paths, sorted: the i-th is stored under
// the ConfigMap key dataKey(i) (a ConfigMap's keys allow no '/').
func (o Options) dataKeys() []string {
	names := make([]string, 0, len(o.DataFiles))
	for name := range o.DataFiles {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func dataKey(i int) string { return "data-" + strconv.Itoa(i) }

// dataConfigMapManifest holds the data files as binaryData: a data file
// is whatever bytes the user's file has.
func (o Options) dataConfigMapManifest() object {
	data := map[string][]byte{}
	for i, name := range o.dataKeys() {
		data[dataKey(i)] = o.DataFiles[name]
	}
	return object{APIVersion: "v1", Kind: "ConfigMap", Metadata: o.meta(o.dataConfigMap(), "data"), BinaryData: data}
}

// scenarioVolume is the pods' volume at ScenarioDir: the scenario's
// ConfigMap or Secret alone, or, with data files, those projected
// together with the data files at their paths.
func (o Options) scenarioVolume() map[string]any {
	if len(o.DataFiles) == 0 {
		if o.ScenarioSecret != "" {
			return map[string]any{"name": "scenario", "secret": map[string]any{"secretName": o.ScenarioSecret}}
		}
		return map[string]any{"name": "scenario", "configMap": map[string]any{"name": o.configMap()}}
	}
	scenario := map[string]any{"configMap": map[string]any{"name": o.configMap()}}
	if o.ScenarioSecret != "" {
		scenario = map[string]any{"secret": map[string]any{"name": o.ScenarioSecret}}
	}
	var items []any
	for i, name := range o.dataKeys() {
		items = append(items, map[string]any{"key": dataKey(i), "path": filepath.ToSlash(filepath.Clean(name))})
	}
	data := map[string]any{"configMap": map[string]any{"name": o.dataConfigMap(), "items": items}}
	return map[string]any{"name": "scenario", "projected": map[string]any{"sources": []any{scenario, data}}}
}
