package engine

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// scenarioRun is one scenario being played.
type scenarioRun struct {
	e      *engine
	cs     *scenario
	sc     *scenCounters
	vuBase int // user index of its first VU in the run

	soft, hard context.Context // soft: start nothing new; hard: abandon requests
	softStop   context.CancelFunc
	hardStop   context.CancelFunc
	vus        sync.WaitGroup
	start      time.Time
}

func (sr *scenarioRun) userStarted() {
	sr.sc.userStarted()
	sr.e.m.all.userStarted()
}

func (sr *scenarioRun) userStopped() {
	sr.sc.userStopped()
	sr.e.m.all.userStopped()
}

// run waits for the scenario's start time, plays it under its executor,
// then gives requests in flight gracefulStop to finish.
func (sr *scenarioRun) run(runSoft, runHard context.Context) {
	if !sleepCtx(runSoft, sr.cs.StartTime.D()) {
		return
	}
	sr.soft, sr.softStop = context.WithCancel(runSoft)
	sr.hard, sr.hardStop = context.WithCancel(runHard)
	defer sr.hardStop()
	sr.start = time.Now()
	switch sr.cs.Executor {
	case plan.ExecConstantVUs:
		sr.constantVUs(0, sr.cs.Duration.D())
	case plan.ExecPerVUIterations:
		sr.constantVUs(sr.cs.Iterations, sr.cs.MaxDuration.D())
	case plan.ExecRampingVUs:
		sr.rampingVUs()
	case plan.ExecConstantArrivalRate:
		sr.arrivalRate(constantPacer(sr.cs.Rate, sr.cs.TimeUnit.D()), sr.cs.Duration.D())
	case plan.ExecRampingArrivalRate:
		sr.arrivalRate(rampingPacer(sr.cs.StartRate, sr.cs.TimeUnit.D(), sr.cs.Stages), sr.cs.Length)
	}
	sr.softStop()
	done := make(chan struct{})
	go func() { sr.vus.Wait(); close(done) }()
	t := time.NewTimer(sr.cs.GracefulStop.D())
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		sr.hardStop() // requests still in flight are abandoned (kind "canceled")
		<-done
	}
}

// constantVUs runs VUs users from the start, each for limit iterations
// (0: until the end), for at most d.
func (sr *scenarioRun) constantVUs(limit int64, d time.Duration) {
	for i := range sr.cs.VUs {
		sr.vus.Go(func() { newVU(sr, sr.vuBase+i, 0).life(sr.soft, sr.hard, limit) })
	}
	// The scenario may end before d: every user done or retired.
	done := make(chan struct{})
	go func() { sr.vus.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-sr.soft.Done():
	case <-t.C:
	case <-done:
	}
}

// rampStep is a change of the number of users at an offset from the start.
type rampStep struct {
	at time.Duration
	n  int
}

// rampSchedule turns stages into the instants the user count changes.
// Going up, a stage starts its first new user at once and the others evenly
// after it; going down, users leave evenly, the last at the stage's end.
func rampSchedule(start int, stages []plan.Stage) []rampStep {
	steps := []rampStep{{0, start}}
	cur, t := start, time.Duration(0)
	for _, st := range stages {
		a, b, d := cur, st.Target, st.Duration.D()
		switch {
		case d <= 0:
			steps = append(steps, rampStep{t, b})
		case b > a:
			for k := a + 1; k <= b; k++ {
				steps = append(steps, rampStep{t + d*time.Duration(k-1-a)/time.Duration(b-a), k})
			}
		case b < a:
			for k := a - 1; k >= b; k-- {
				steps = append(steps, rampStep{t + d*time.Duration(a-k)/time.Duration(a-b), k})
			}
		}
		cur, t = b, t+max(d, 0)
	}
	return steps
}

// rampingVUs follows the stages; a user ramped down finishes its request
// in flight (within gracefulRampDown) and closes its session.
func (sr *scenarioRun) rampingVUs() {
	type slot struct {
		softStop, hardStop context.CancelFunc
		timer              *time.Timer
		gen                uint64
	}
	slots := make([]slot, sr.cs.Users)
	defer func() {
		// Users still ramping down now fall under the scenario's
		// gracefulStop; each cancels its own contexts when it exits.
		for i := range slots {
			if slots[i].timer != nil {
				slots[i].timer.Stop()
			}
		}
	}()
	cur := 0
	for _, st := range rampSchedule(sr.cs.StartVUs, sr.cs.Stages) {
		if !sleepUntil(sr.soft, sr.start.Add(st.at)) {
			return
		}
		for ; cur < st.n; cur++ {
			s := &slots[cur]
			soft, softStop := context.WithCancel(sr.soft)
			hard, hardStop := context.WithCancel(sr.hard)
			s.softStop, s.hardStop, s.timer = softStop, hardStop, nil
			user, gen := sr.vuBase+cur, s.gen
			s.gen++
			sr.vus.Go(func() {
				defer hardStop()
				defer softStop()
				newVU(sr, user, gen).life(soft, hard, 0)
			})
		}
		for cur > st.n {
			cur--
			s := &slots[cur]
			s.softStop()
			s.timer = time.AfterFunc(sr.cs.GracefulRampDown.D(), s.hardStop)
		}
	}
	sleepUntil(sr.soft, sr.start.Add(sr.cs.Length))
}

// arrivalRate starts iterations when pacer says they are due, each on a
// free user; with none free and MaxVUs reached, the iteration is dropped
// and counted, never queued.
func (sr *scenarioRun) arrivalRate(pacer pacer, total time.Duration) {
	maxVUs := sr.cs.Users
	idle := make(chan *vu, maxVUs)
	allocated := 0
	spawn := func(first time.Time, ready *sync.WaitGroup) {
		v := newVU(sr, sr.vuBase+allocated, 0)
		allocated++
		jobs := make(chan time.Time, 1)
		if !first.IsZero() {
			jobs <- first
		}
		sr.vus.Go(func() { v.serve(sr.soft, sr.hard, jobs, idle, ready) })
	}
	// Pre-allocated users get their sessions before the rate clock starts,
	// as k6 initializes VUs before the test.
	var ready sync.WaitGroup
	for range sr.cs.PreAllocatedVUs {
		ready.Add(1)
		spawn(time.Time{}, &ready)
	}
	waitGroup(sr.soft, &ready)
	clock := time.Now()
	for n := int64(0); ; n++ {
		at, ok := pacer.At(sr.e.segment.Iteration(n)) // a shard plays every Count-th
		if !ok || at >= total {
			break
		}
		due := clock.Add(at)
		if !sleepUntil(sr.soft, due) {
			return
		}
		select {
		case v := <-idle:
			v.jobs <- due
		default:
			if allocated < maxVUs {
				spawn(due, nil)
			} else {
				sr.sc.dropped.Add(1)
			}
		}
	}
	sleepUntil(sr.soft, clock.Add(total))
}

// serve is an arrival-rate user: it initializes (if ready is not nil),
// then plays the iterations handed to it, going back to idle after each.
func (v *vu) serve(soft, hard context.Context, jobs chan time.Time, idle chan<- *vu, ready *sync.WaitGroup) {
	v.jobs = jobs
	v.sr.userStarted()
	defer v.sr.userStopped()
	defer v.closeSession(hard)
	if ready != nil {
		ok := v.startSession(soft, hard)
		ready.Done()
		if !ok {
			return
		}
		idle <- v // cannot block: idle holds every user
	}
	for {
		select {
		case <-soft.Done():
			return
		case due := <-jobs:
			v.iterate(soft, hard, due)
			if v.retired || hard.Err() != nil {
				return
			}
			idle <- v
		}
	}
}

// pacer decides when the iterations of an arrival-rate scenario are due:
// At returns the offset from the start of iteration n (from 0), and false
// when there is none.
type pacer interface {
	At(n int64) (time.Duration, bool)
}

// pacerFunc adapts a function to a pacer.
type pacerFunc func(n int64) (time.Duration, bool)

// At calls f.
func (f pacerFunc) At(n int64) (time.Duration, bool) { return f(n) }

// constantPacer paces rate iterations per timeUnit, evenly.
func constantPacer(rate int, timeUnit time.Duration) pacer {
	return pacerFunc(func(n int64) (time.Duration, bool) {
		if rate <= 0 || timeUnit <= 0 {
			return 0, false
		}
		r := int64(rate)
		return time.Duration(n/r)*timeUnit + time.Duration(n%r)*timeUnit/time.Duration(r), true
	})
}

// rampingPacer paces a rate (iterations per timeUnit) that moves linearly
// from startRate through each stage's target, as k6's
// ramping-arrival-rate: iteration n is due when the integral of the rate
// reaches n.
func rampingPacer(startRate int, timeUnit time.Duration, stages []plan.Stage) pacer {
	type seg struct {
		t0, d      float64 // seconds
		r0, r1     float64 // per second
		c0, c1     float64 // cumulative iterations at the ends
		zeroLength bool
	}
	var segs []seg
	per := timeUnit.Seconds()
	t, c, r := 0.0, 0.0, float64(startRate)/per
	for _, st := range stages {
		d := st.Duration.D().Seconds()
		r1 := float64(st.Target) / per
		s := seg{t0: t, d: d, r0: r, r1: r1, c0: c, zeroLength: d <= 0}
		c += (r + r1) / 2 * d
		s.c1 = c
		segs = append(segs, s)
		t, r = t+d, r1
	}
	return pacerFunc(func(n int64) (time.Duration, bool) {
		x := float64(n)
		for _, s := range segs {
			if s.zeroLength || x >= s.c1 || (s.c1 == s.c0) {
				continue
			}
			k := x - s.c0 // iterations into this segment
			a, b := s.r0, (s.r1-s.r0)/s.d
			var dt float64
			if b == 0 {
				dt = k / a
			} else {
				dt = (-a + math.Sqrt(max(a*a+2*b*k, 0))) / b
			}
			return time.Duration((s.t0 + min(max(dt, 0), s.d)) * float64(time.Second)), true
		}
		return 0, false
	})
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func sleepUntil(ctx context.Context, at time.Time) bool { return sleepCtx(ctx, time.Until(at)) }

// waitGroup waits for wg or until ctx ends.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
