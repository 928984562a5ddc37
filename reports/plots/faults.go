package plots

import "image/color"

// colFault shades the spans a fault of the run's timeline was on.
var colFault = color.NRGBA{R: 220, G: 60, B: 60, A: 50}

// addFaultBands shades each fault's span on a time panel (an instant
// action: a thin band of a probe interval or so), with one legend entry.
func addFaultBands(p *panel, r *Run) {
	legend := false
	for _, f := range r.Summary.Faults {
		if f.Applied == nil {
			continue
		}
		from := r.at(*f.Applied)
		to := from + 0.2
		if f.Removed != nil && r.at(*f.Removed) > to {
			to = r.at(*f.Removed)
		}
		b := band{from: from, to: to, fill: colFault}
		p.Add(b)
		if !legend {
			p.addLegend("fault on", b)
			legend = true
		}
	}
}
