package usl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// curve is the model's X at ns, each point off by up to ±noise
// (relative), from a seeded source so that a failure repeats.
func curve(lambda, sigma, kappa, noise float64, ns ...float64) []Point {
	rng := rand.New(rand.NewPCG(42, 7))
	f := Fit{Lambda: lambda, Sigma: sigma, Kappa: kappa}
	var pts []Point
	for _, n := range ns {
		pts = append(pts, Point{N: n, X: f.At(n) * (1 + noise*(2*rng.Float64()-1))})
	}
	return pts
}

// TestFitRecovers: curves generated with known σ and κ, exact and with
// 1% noise, give back their parameters and peak.
func TestFitRecovers(t *testing.T) {
	ns := []float64{1, 2, 4, 8, 12, 16, 24, 32, 48, 64}
	for _, tc := range []struct {
		lambda, sigma, kappa, noise float64
		// tolerances: absolute on σ, relative on κ and λ
		tolSigma, tolKappa float64
	}{
		{100, 0.05, 0.002, 0, 1e-3, 0.01},
		{100, 0.05, 0.002, 0.01, 0.01, 0.15},
		{20, 0.2, 0.0005, 0, 1e-3, 0.01},
		{20, 0.2, 0.0005, 0.01, 0.02, 0.3},
		{50, 0.01, 0.01, 0.01, 0.01, 0.15},
	} {
		t.Run(fmt.Sprintf("σ%.3g_κ%.3g_noise%.2g", tc.sigma, tc.kappa, tc.noise), func(t *testing.T) {
			f := FitPoints(curve(tc.lambda, tc.sigma, tc.kappa, tc.noise, ns...))
			if !f.Predicts() {
				t.Fatalf("refused: %s", f.Refused)
			}
			t.Logf("λ %.3f σ %.4f κ %.6f R² %.4f N* %.1f X* %.1f", f.Lambda, f.Sigma, f.Kappa, f.R2, f.PeakN, f.PeakX)
			if math.Abs(f.Sigma-tc.sigma) > tc.tolSigma {
				t.Errorf("σ %.4f, want %.4f ± %.3g", f.Sigma, tc.sigma, tc.tolSigma)
			}
			if math.Abs(f.Kappa-tc.kappa) > tc.tolKappa*tc.kappa {
				t.Errorf("κ %.6f, want %.6f ± %.0f%%", f.Kappa, tc.kappa, 100*tc.tolKappa)
			}
			if math.Abs(f.Lambda-tc.lambda) > 0.05*tc.lambda {
				t.Errorf("λ %.3f, want %.3f ± 5%%", f.Lambda, tc.lambda)
			}
			wantN := math.Sqrt((1 - tc.sigma) / tc.kappa)
			if math.Abs(f.PeakN-wantN) > 0.15*wantN {
				t.Errorf("N* %.1f, want %.1f ± 15%%", f.PeakN, wantN)
			}
			if f.R2 < 0.99 {
				t.Errorf("R² %.4f, want ≥ 0.99", f.R2)
			}
		})
	}
}

// TestFitRefuses: too few points, too few distinct loads, a shape the
// model does not have.
func TestFitRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []Point
	}{
		{"three points", curve(100, 0.05, 0.002, 0, 1, 8, 32)},
		{"none", nil},
		{"two distinct loads", []Point{{1, 10}, {1, 11}, {8, 60}, {8, 61}}},
		// A sawtooth: throughput that jumps up and down with load.
		{"poor fit", []Point{{1, 100}, {2, 5}, {4, 100}, {8, 5}, {16, 100}, {32, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := FitPoints(tc.pts)
			if f.Predicts() || f.Refused == "" {
				t.Fatalf("predicted from %v: %+v", tc.pts, f)
			}
			if f.PeakN != 0 || f.PeakX != 0 {
				t.Errorf("refused fit carries a peak: %+v", f)
			}
			t.Log(f.Refused)
		})
	}
}

// TestNoCoherency: κ = 0 has no peak; the fit says none rather than an
// infinite N*.
func TestNoCoherency(t *testing.T) {
	f := FitPoints(curve(10, 0.1, 0, 0, 1, 2, 4, 8, 16, 32))
	if !f.Predicts() {
		t.Fatalf("refused: %s", f.Refused)
	}
	if f.Kappa > 1e-6 || (f.PeakN != 0 && f.PeakN < 1000) {
		t.Errorf("κ %.3g N* %.1f, want κ ≈ 0 and no peak in range", f.Kappa, f.PeakN)
	}
}
