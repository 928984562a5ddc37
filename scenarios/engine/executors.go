package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leakbench/leakbench/scenarios/engine/schedule"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// scenarioRun is one scenario being played.
type scenarioRun struct {
	e      *engine
	cs     *scenario
	sc     *scenCounters
	vuBase int // user index of its first VU in the run
	// dataBase and dataUsers are the scenario's first user index and its
	// users in the whole plan, also in a segment (segment.go): a data
	// file's rows follow the user's place in the whole scenario, so that
	// shards and workers hand out the rows one process would.
	dataBase, dataUsers int

	soft, hard context.Context // soft: start nothing new; hard: abandon requests
	softStop   context.CancelFunc
	hardStop   context.CancelFunc
	vus        sync.WaitGroup
	start      time.Time

	// stoppedCh is closed once every user has stopped (usersStopped).
	stoppedOnce sync.Once
	stoppedCh   chan struct{}

	// An externally-controlled scenario's target users, set by Scale
	// (external.go), which signals scaled; over once it has ended.
	scaleMu   sync.Mutex
	vusTarget int
	scaled    chan struct{}
	over      atomic.Bool
}

func (sr *scenarioRun) userStarted() {
	sr.sc.userStarted()
	sr.e.m.all.userStarted()
}

func (sr *scenarioRun) userStopped() {
	sr.sc.userStopped()
	sr.e.m.all.userStopped()
}

// usersStopped is closed once every user of the scenario has stopped.
// One goroutine waits for them, for every caller: run waits for it to
// close before it returns, so that no waiter outlives the run (a second
// waiter, woken with the first, could — TestHandRolledServer saw it).
// Called once the executor has started its users (or from run, after it).
func (sr *scenarioRun) usersStopped() <-chan struct{} {
	sr.stoppedOnce.Do(func() {
		sr.stoppedCh = make(chan struct{})
		go func() { sr.vus.Wait(); close(sr.stoppedCh) }()
	})
	return sr.stoppedCh
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
		sr.arrivalRate(schedule.Constant(sr.cs.Rate, sr.cs.TimeUnit.D()), sr.cs.Duration.D())
	case plan.ExecRampingArrivalRate:
		sr.arrivalRate(schedule.Ramping(sr.cs.StartRate, sr.cs.TimeUnit.D(), sr.cs.Stages), sr.cs.Length)
	case plan.ExecExternallyControlled:
		sr.externallyControlled() // external.go
	}
	sr.softStop()
	done := sr.usersStopped()
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
	done := sr.usersStopped()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-sr.soft.Done():
	case <-t.C:
	case <-done:
	}
}

// rampingVUs follows the stages; a user ramped down finishes its request
// in flight (within gracefulRampDown) and closes its session.
func (sr *scenarioRun) rampingVUs() {
	u := newUserSlots(sr, sr.cs.Users, sr.cs.GracefulRampDown.D())
	defer u.release()
	for _, st := range schedule.Ramp(sr.cs.StartVUs, sr.cs.Stages) {
		if !sleepUntil(sr.soft, sr.start.Add(st.At)) {
			return
		}
		u.set(st.Users)
	}
	sleepUntil(sr.soft, sr.start.Add(sr.cs.Length))
}

// userSlots starts and stops a scenario's users, one slot each, as a
// ramping or externally-controlled executor changes their number. A user
// stopped finishes its request in flight within rampDown and closes its
// session; a slot started again is a new user (its generation).
type userSlots struct {
	sr       *scenarioRun
	slots    []userSlot
	cur      int
	rampDown time.Duration
}

type userSlot struct {
	softStop, hardStop context.CancelFunc
	timer              *time.Timer
	gen                uint64
}

func newUserSlots(sr *scenarioRun, most int, rampDown time.Duration) *userSlots {
	return &userSlots{sr: sr, slots: make([]userSlot, most), rampDown: rampDown}
}

// set starts or stops users until n run (n within the slots).
func (u *userSlots) set(n int) {
	sr := u.sr
	for ; u.cur < n; u.cur++ {
		s := &u.slots[u.cur]
		soft, softStop := context.WithCancel(sr.soft)
		hard, hardStop := context.WithCancel(sr.hard)
		s.softStop, s.hardStop, s.timer = softStop, hardStop, nil
		user, gen := sr.vuBase+u.cur, s.gen
		s.gen++
		sr.vus.Go(func() {
			defer hardStop()
			defer softStop()
			newVU(sr, user, gen).life(soft, hard, 0)
		})
	}
	for u.cur > n {
		u.cur--
		s := &u.slots[u.cur]
		s.softStop()
		s.timer = time.AfterFunc(u.rampDown, s.hardStop)
	}
}

// release stops the ramp-down timers: users still ramping down now fall
// under the scenario's gracefulStop; each cancels its own contexts when it
// exits.
func (u *userSlots) release() {
	for i := range u.slots {
		if u.slots[i].timer != nil {
			u.slots[i].timer.Stop()
		}
	}
}

// arrivalRate starts iterations when pacer says they are due, each on a
// free user; with none free and MaxVUs reached, the iteration is dropped
// and counted, never queued.
func (sr *scenarioRun) arrivalRate(pacer schedule.Pacer, total time.Duration) {
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
			v.dropPending(jobs)
			return
		case due := <-jobs:
			if soft.Err() != nil {
				// Handed its iteration just before the scenario ended,
				// the user did not get to start it (a loaded machine, or
				// the race detector, schedules it late): it is dropped,
				// so that iterations and dropped ones add up to the
				// schedule, as k6's dropped_iterations do.
				v.sr.sc.dropped.Add(1)
				return
			}
			if !v.iterate(soft, hard, due) {
				// The scenario ended between the hand-over and the
				// iteration's first step: not started, so dropped.
				v.sr.sc.dropped.Add(1)
			}
			if v.retired || hard.Err() != nil {
				return
			}
			idle <- v
		}
	}
}

// dropPending counts as dropped an iteration handed to this user that it
// never started: the scenario ended first.
func (v *vu) dropPending(jobs chan time.Time) {
	select {
	case <-jobs:
		v.sr.sc.dropped.Add(1)
	default:
	}
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
