package api

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestLimiterSharesTheBudgetAmongReplicas: with three replicas a bucket
// holds a third of the limit and refills at a third of the rate, while the
// headers speak of the whole budget; when one replica goes, the part grows
// to a half.
func TestLimiterSharesTheBudgetAmongReplicas(t *testing.T) {
	replicas := 3
	r := newRateLimiter(600, func() int { return replicas })
	key, now := uuid.New(), time.Unix(1_800_000_000, 0)
	var st rateState
	for i := range 200 {
		if st = r.take(key, 0, now); !st.ok {
			t.Fatalf("request %d refused; a third of 600 is 200", i+1)
		}
	}
	if st.perMinute != 600 || st.remaining != 0 {
		t.Errorf("after the part is spent: limit %d remaining %d, want 600 and 0", st.perMinute, st.remaining)
	}
	if st = r.take(key, 0, now); st.ok || st.retryAfter != 300*time.Millisecond {
		t.Errorf("the 201st: ok=%v retryAfter %v; want refused, a token in 60 s / 200 = 300 ms", st.ok, st.retryAfter)
	}
	// A second refills a third of 10 a second.
	now = now.Add(3 * time.Second)
	if st = r.take(key, 0, now); !st.ok || st.remaining != 27 {
		t.Errorf("3 s later: ok=%v remaining %d; want 10 tokens in, one spent, 9 read as 27 of the budget", st.ok,
			st.remaining)
	}
	replicas = 2
	now = now.Add(time.Second)
	st = r.take(key, 0, now)
	if !st.ok || st.fullIn <= 0 {
		t.Fatalf("after a replica left: %+v", st)
	}
	// The second before the take was earned at a third (10/3 tokens: the
	// share changes when this replica learns of it): 9 + 3.33 - 1 = 11.33 of
	// 300, read as 22 of the budget.
	if st.remaining != 22 {
		t.Errorf("remaining %d after a replica left, want 22", st.remaining)
	}
	// From then on it refills at half the rate: 5 a second.
	now = now.Add(2 * time.Second)
	if st = r.take(key, 0, now); st.remaining != 40 {
		t.Errorf("remaining %d 2 s later, want (11.33 + 10 - 1) x 2 = 40", st.remaining)
	}
}

// TestRefundGivesATokenBack: a refunded request costs nothing, and a refund
// never fills the bucket beyond its capacity.
func TestRefundGivesATokenBack(t *testing.T) {
	r := newRateLimiter(2, nil)
	key, now := uuid.New(), time.Unix(1_800_000_000, 0)
	r.take(key, 0, now)
	r.take(key, 0, now)
	if st := r.take(key, 0, now); st.ok {
		t.Fatal("the third of 2 was let through")
	}
	if st, ok := r.refund(key, now); !ok || st.remaining != 1 {
		t.Fatalf("refund: %+v %v, want one token back", st, ok)
	}
	if st := r.take(key, 0, now); !st.ok {
		t.Error("the refunded token could not be spent")
	}
	r.refund(key, now)
	r.refund(key, now)
	if st, _ := r.refund(key, now); st.remaining != 2 {
		t.Errorf("remaining %d after refunds beyond the capacity, want 2", st.remaining)
	}
	if _, ok := r.refund(uuid.New(), now); ok {
		t.Error("a key never seen was refunded")
	}
}
