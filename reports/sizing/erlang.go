package sizing

import "math"

// erlangC is the probability that an arrival waits in an M/M/c queue with
// c servers and offered load a (erlangs: arrival rate × mean hold); 1
// when c ≤ a (the queue grows without bound). It goes through Erlang B's
// recurrence, which stays finite where A^c/c! would overflow.
func erlangC(c int, a float64) float64 {
	if float64(c) <= a {
		return 1
	}
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return float64(c) * b / (float64(c) - a*(1-b))
}

// poolFor is the smallest c with erlangC(c, a) ≤ maxWait, with that
// probability and the mean wait in units of the hold (C / (c − a)).
func poolFor(a, maxWait float64) (c int, pWait, meanWaitHolds float64) {
	c = max(int(math.Floor(a))+1, 1)
	for ; ; c++ {
		if p := erlangC(c, a); p <= maxWait {
			return c, p, p / (float64(c) - a)
		}
	}
}
