package gateway

import (
	"context"
	"errors"
	"testing"
)

// TestRarePath checks that commit-in-finally-rare's error path is taken by
// exactly one request in RareLeakEvery, and that its cleanup context is
// cancelled with the rare path's cause only then.
func TestRarePath(t *testing.T) {
	for _, every := range []int{1, 20, 500} {
		g := &Gateway{cfg: Config{RareLeakEvery: every}}
		n := 0
		for range 10 * every {
			if g.rarePath() {
				n++
			}
		}
		if n != 10 {
			t.Errorf("every %d: %d of %d requests took the rare path, want 10", every, n, 10*every)
		}
	}
	if err := cleanupContext(context.Background(), false).Err(); err != nil {
		t.Errorf("common path: cleanup context already done: %v", err)
	}
	c := cleanupContext(context.Background(), true)
	if c.Err() == nil || !errors.Is(context.Cause(c), errRarePath) {
		t.Errorf("rare path: cleanup context err %v, cause %v; want cancelled by errRarePath", c.Err(), context.Cause(c))
	}
}

func TestRareLeakEveryValidated(t *testing.T) {
	c := Config{DSN: "postgres://x@127.0.0.1/x", RareLeakEvery: -1}.withDefaults()
	if err := c.validate(); err == nil {
		t.Error("RareLeakEvery -1 validated; want an error")
	}
	if d := (Config{}).withDefaults().RareLeakEvery; d != DefaultRareLeakEvery {
		t.Errorf("default RareLeakEvery %d, want %d", d, DefaultRareLeakEvery)
	}
}
