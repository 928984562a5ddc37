// Package usl fits Gunther's Universal Scalability Law to a capacity
// curve — throughput X at concurrency N:
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// λ is the throughput of one user, σ the contention (the part that
// queues: a pool, a lock), κ the coherency cost (the part that grows with
// every pair of users). The fit is a model of the points it was given,
// never a measurement: its peak N* = √((1−σ)/κ) is a prediction, and the
// package refuses one from fewer than MinPoints points or a fit whose R²
// is below MinR2.
//
//	f := usl.FitPoints([]usl.Point{{N: 1, X: 10}, {N: 2, X: 19}, {N: 4, X: 34}, {N: 8, X: 52}})
//	if f.Predicts() { fmt.Println(f.PeakN, f.PeakX) } else { fmt.Println(f.Refused) }
//
// It is a leaf: it knows nothing of run directories.
package usl

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// MinPoints is the fewest points fitted: three parameters through three
// points fit any curve exactly, and so say nothing.
const MinPoints = 4

// MinR2 is the least R² whose fit predicts a peak: below it the model
// does not describe the curve well enough to extrapolate from it.
const MinR2 = 0.9

// Point is one measured stage: N users, X completed requests a second.
type Point struct {
	N float64 `json:"n"`
	X float64 `json:"x"`
}

// Fit is the model fitted to a curve. Model is always "Universal
// Scalability Law"; Refused says why there is no fit or no prediction
// (then Lambda … PeakX may be zero or, for a poor fit, present but not
// to be used).
type Fit struct {
	Model  string  `json:"model"`
	Points int     `json:"points"`
	Lambda float64 `json:"lambda,omitempty"`
	Sigma  float64 `json:"sigma,omitempty"`
	Kappa  float64 `json:"kappa,omitempty"`
	R2     float64 `json:"r2,omitempty"`
	// MinR2 is the bound the fit was judged by.
	MinR2 float64 `json:"min_r2"`
	// PeakN is N* = √((1−σ)/κ), PeakX the model's X(N*); both omitted
	// when κ is 0 (no peak: the model levels off at λ/σ) or the fit was
	// refused.
	PeakN float64 `json:"peak_n,omitempty"`
	PeakX float64 `json:"peak_x,omitempty"`
	// Refused says why the model predicts nothing; empty when it does.
	Refused string `json:"refused,omitempty"`
}

// ModelName is Fit.Model.
const ModelName = "Universal Scalability Law"

// Predicts says whether the fit may be used for a prediction.
func (f *Fit) Predicts() bool { return f != nil && f.Refused == "" }

// At is the model's throughput at n.
func (f *Fit) At(n float64) float64 {
	return f.Lambda * n / (1 + f.Sigma*(n-1) + f.Kappa*n*(n-1))
}

// FitPoints fits the model to pts (N > 0, X ≥ 0; others are dropped) by
// nonlinear least squares on X, started from the linear least-squares
// fit of N/X, which the model makes a quadratic in N.
func FitPoints(pts []Point) *Fit {
	f := &Fit{Model: ModelName, MinR2: MinR2}
	var use []Point
	for _, p := range pts {
		if p.N > 0 && p.X >= 0 && !math.IsNaN(p.X) && !math.IsInf(p.X, 0) {
			use = append(use, p)
		}
	}
	slices.SortFunc(use, func(a, b Point) int { return cmpFloat(a.N, b.N) })
	f.Points = len(use)
	if len(use) < MinPoints {
		f.Refused = fmt.Sprintf("%d points: the model needs at least %d (three parameters fit any three points)", len(use), MinPoints)
		return f
	}
	distinct := 1
	for i := 1; i < len(use); i++ {
		if use[i].N != use[i-1].N {
			distinct++
		}
	}
	if distinct < 3 {
		f.Refused = fmt.Sprintf("%d distinct concurrencies: the model needs at least 3", distinct)
		return f
	}
	lambda, sigma, kappa := linearStart(use)
	lambda, sigma, kappa = refine(use, lambda, sigma, kappa)
	f.Lambda, f.Sigma, f.Kappa = lambda, sigma, kappa
	f.R2 = r2(use, f)
	if f.R2 < MinR2 {
		f.Refused = fmt.Sprintf("poor fit: R² %.3f below %.2f — the curve is not the model's shape; no prediction", f.R2, MinR2)
		return f
	}
	if kappa > 0 && sigma < 1 {
		f.PeakN = math.Sqrt((1 - sigma) / kappa)
		f.PeakX = f.At(f.PeakN)
	}
	return f
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// linearStart solves N/X = a + b(N−1) + cN(N−1) by least squares, with
// a = 1/λ, b = σ/λ, c = κ/λ; points with X = 0 are left out. A negative
// σ or κ is clamped to 0 (the model has none).
func linearStart(pts []Point) (lambda, sigma, kappa float64) {
	var rows []float64
	var ys []float64
	for _, p := range pts {
		if p.X <= 0 {
			continue
		}
		rows = append(rows, 1, p.N-1, p.N*(p.N-1))
		ys = append(ys, p.N/p.X)
	}
	n := len(ys)
	if n >= 3 {
		a := mat.NewDense(n, 3, rows)
		var beta mat.VecDense
		if err := beta.SolveVec(a, mat.NewVecDense(n, ys)); err == nil && beta.AtVec(0) > 0 {
			lambda = 1 / beta.AtVec(0)
			return lambda, max(beta.AtVec(1)*lambda, 0), max(beta.AtVec(2)*lambda, 0)
		}
	}
	// No usable start: one user's throughput, no contention.
	return pts[0].X / pts[0].N, 0, 0
}

// refine minimises the squared error of X with Nelder–Mead over
// (√λ, √σ, √κ): squares keep the parameters non-negative without a
// constraint the method cannot take.
func refine(pts []Point, lambda, sigma, kappa float64) (float64, float64, float64) {
	sse := func(l, s, k float64) float64 {
		var e float64
		for _, p := range pts {
			d := p.X - l*p.N/(1+s*(p.N-1)+k*p.N*(p.N-1))
			e += d * d
		}
		return e
	}
	// A zero start gives Nelder–Mead's simplex no size in that direction.
	start := []float64{math.Sqrt(lambda), math.Sqrt(max(sigma, 1e-4)), math.Sqrt(max(kappa, 1e-6))}
	prob := optimize.Problem{Func: func(x []float64) float64 { return sse(x[0]*x[0], x[1]*x[1], x[2]*x[2]) }}
	res, err := optimize.Minimize(prob, start, &optimize.Settings{FuncEvaluations: 20000}, &optimize.NelderMead{})
	if err != nil && res == nil {
		return lambda, sigma, kappa
	}
	l, s, k := res.X[0]*res.X[0], res.X[1]*res.X[1], res.X[2]*res.X[2]
	if sse(l, s, k) <= sse(lambda, sigma, kappa) {
		return l, s, k
	}
	return lambda, sigma, kappa
}

// r2 is the coefficient of determination of the fit on X.
func r2(pts []Point, f *Fit) float64 {
	var mean float64
	for _, p := range pts {
		mean += p.X
	}
	mean /= float64(len(pts))
	var res, tot float64
	for _, p := range pts {
		d := p.X - f.At(p.N)
		res += d * d
		tot += (p.X - mean) * (p.X - mean)
	}
	if tot == 0 {
		return 0
	}
	return 1 - res/tot
}
